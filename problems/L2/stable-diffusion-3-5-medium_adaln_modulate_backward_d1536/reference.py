import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_tokens'], a['dim'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['dim'])
    dt = torch.bfloat16
    out['temb'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['mod_dim'], a['dim'])
    dt = torch.bfloat16
    out['linear_weight'] = (torch.randn(shape, device=device) * 0.02551551815399144).to(dt)
    shape = (a['mod_dim'],)
    dt = torch.bfloat16
    out['linear_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['batch_size'], a['num_tokens'], a['dim'])
    dt = torch.bfloat16
    out['grad_output'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    return out


def run(hidden_states, temb, linear_weight, linear_bias, grad_output):
    with torch.enable_grad():
        params = [t.detach().requires_grad_() for t in (hidden_states, temb, linear_weight, linear_bias)]
        x, c, w, bias = params
        shift, scale = F.linear(F.silu(c), w, bias).chunk(2, dim=1)
        normed = F.layer_norm(x, (x.shape[-1],), eps=1e-06) * (1 + scale[:, None]) + shift[:, None]
        return torch.autograd.grad(normed, params, grad_output)
