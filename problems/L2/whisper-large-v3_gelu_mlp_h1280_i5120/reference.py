import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['intermediate_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['fc1_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['intermediate_size'],)
    dt = torch.bfloat16
    out['fc1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['intermediate_size'])
    dt = torch.bfloat16
    out['fc2_weight'] = (torch.randn(shape, device=device) * 0.013975424859373685).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['fc2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    h = F.linear(hidden_states, fc1_weight, fc1_bias)
    return F.linear(F.gelu(h), fc2_weight, fc2_bias)
