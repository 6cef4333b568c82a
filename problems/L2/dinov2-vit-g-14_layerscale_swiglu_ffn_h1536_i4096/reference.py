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
    return out


@torch.no_grad()
def run(hidden_states, norm_weight, norm_bias, w12_weight, w12_bias, w3_weight, w3_bias, ls_gamma):
    h = F.layer_norm(hidden_states, (hidden_states.shape[-1],), norm_weight, norm_bias, 1e-06)
    x1, x2 = F.linear(h, w12_weight, w12_bias).chunk(2, dim=-1)
    return hidden_states + ls_gamma * F.linear(F.silu(x1) * x2, w3_weight, w3_bias)
