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
    out['gate_proj'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['intermediate_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['up_proj'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['hidden_size'], a['intermediate_size'])
    dt = torch.bfloat16
    out['down_proj'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, gate_proj, up_proj, down_proj):
    gate = F.linear(hidden_states, gate_proj)
    up = F.linear(hidden_states, up_proj)
    act = F.silu(gate)
    return F.linear(act * up, down_proj)
