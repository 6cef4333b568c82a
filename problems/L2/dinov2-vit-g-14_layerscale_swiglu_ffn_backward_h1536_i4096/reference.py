import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['two_ffn'], a['hidden_size'])
    dt = torch.bfloat16
    out['w12_weight'] = (torch.randn(shape, device=device) * 0.02551551815399144).to(dt)
    shape = (a['two_ffn'],)
    dt = torch.bfloat16
    out['w12_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['ffn_hidden'])
    dt = torch.bfloat16
    out['w3_weight'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['w3_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ls_gamma'] = (torch.randn(shape, device=device) * 0.3 + 1.0).to(dt)
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['grad_output'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    return out


def run(hidden_states, norm_weight, norm_bias, w12_weight, w12_bias, w3_weight, w3_bias, ls_gamma, grad_output):
    # Parameter gradients sum over every token: accumulated in fp32, so the result does not depend on the
    # summation order (thread count).
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    originals = (hidden_states, norm_weight, norm_bias, w12_weight, w12_bias, w3_weight, w3_bias, ls_gamma)
    with torch.enable_grad():
        params = [t.detach().to(compute).requires_grad_() for t in originals]
        x, nw, nb, w12, b12, w3, b3, gamma = params
        h = F.layer_norm(x, (x.shape[-1],), nw, nb, 1e-06)
        x1, x2 = F.linear(h, w12, b12).chunk(2, dim=-1)
        out = x + gamma * F.linear(F.silu(x1) * x2, w3, b3)
        grads = torch.autograd.grad(out, params, grad_output.to(compute))
    return tuple(g.to(t.dtype) for g, t in zip(grads, originals))
