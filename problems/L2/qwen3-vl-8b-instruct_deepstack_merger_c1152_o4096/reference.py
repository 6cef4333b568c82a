import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['merged_dim'],)
    dt = torch.bfloat16
    out['norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['merged_dim'],)
    dt = torch.bfloat16
    out['norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['merged_dim'], a['merged_dim'])
    dt = torch.bfloat16
    out['fc1_weight'] = (torch.randn(shape, device=device) * 0.01473139127471974).to(dt)
    shape = (a['merged_dim'],)
    dt = torch.bfloat16
    out['fc1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_hidden'], a['merged_dim'])
    dt = torch.bfloat16
    out['fc2_weight'] = (torch.randn(shape, device=device) * 0.01473139127471974).to(dt)
    shape = (a['out_hidden'],)
    dt = torch.bfloat16
    out['fc2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    c = fc1_weight.shape[1]
    x = F.layer_norm(hidden_states.view(-1, c), (c,), norm_weight, norm_bias, 1e-06)
    return F.linear(F.gelu(F.linear(x, fc1_weight, fc1_bias)), fc2_weight, fc2_bias)
