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
    shape = (a['mlp_hidden'], a['hidden_size'])
    dt = torch.bfloat16
    out['fc1_weight'] = (torch.randn(shape, device=device) * 0.03125).to(dt)
    shape = (a['mlp_hidden'],)
    dt = torch.bfloat16
    out['fc1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['mlp_hidden'])
    dt = torch.bfloat16
    out['fc2_weight'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['fc2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ls_gamma'] = (torch.randn(shape, device=device) * 0.3 + 1.0).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias, ls_gamma):
    h = F.layer_norm(hidden_states, (hidden_states.shape[-1],), norm_weight, norm_bias, 1e-06)
    h = F.linear(F.gelu(F.linear(h, fc1_weight, fc1_bias)), fc2_weight, fc2_bias)
    return hidden_states + ls_gamma * h
