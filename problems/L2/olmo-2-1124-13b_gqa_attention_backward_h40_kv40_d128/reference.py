import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_heads'], a['seq_len'], a['head_dim'])
    dt = torch.bfloat16
    out['query'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_kv_heads'], a['seq_len'], a['head_dim'])
    dt = torch.bfloat16
    out['key'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_kv_heads'], a['seq_len'], a['head_dim'])
    dt = torch.bfloat16
    out['value'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['seq_len'], a['head_dim'])
    dt = torch.bfloat16
    out['grad_output'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    return out


def run(query, key, value, grad_output):
    with torch.enable_grad():
        q, k, v = (t.detach().requires_grad_() for t in (query, key, value))
        group = q.shape[1] // k.shape[1]
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1),
                                           is_causal=True)
        return torch.autograd.grad(o, (q, k, v), grad_output)
