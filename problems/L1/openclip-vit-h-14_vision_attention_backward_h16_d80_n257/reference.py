import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_heads'], a['num_tokens'], a['head_dim'])
    dt = torch.bfloat16
    out['query'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['num_tokens'], a['head_dim'])
    dt = torch.bfloat16
    out['key'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['num_tokens'], a['head_dim'])
    dt = torch.bfloat16
    out['value'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['num_tokens'], a['head_dim'])
    dt = torch.bfloat16
    out['grad_output'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    return out


def run(query, key, value, grad_output):
    compute = torch.promote_types(query.dtype, torch.float32)
    with torch.enable_grad():
        q, k, v = (t.detach().to(compute).requires_grad_() for t in (query, key, value))
        o = F.scaled_dot_product_attention(q, k, v)
        grads = torch.autograd.grad(o, (q, k, v), grad_output.to(compute))
    return tuple(g.to(query.dtype) for g in grads)
