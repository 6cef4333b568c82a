import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_frames'], a['hidden_size'])
    dt = torch.float32
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'], a['group_channels'], a['kernel'])
    dt = torch.float32
    out['weight_v'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['one'], a['one'], a['kernel'])
    dt = torch.float32
    out['weight_g'] = (torch.rand(shape, device=device) * 0.5 + 0.5).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.float32
    out['conv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, weight_v, weight_g, conv_bias):
    # weight_norm(dim=2): one norm per kernel tap over (out, in) channels
    weight = weight_v * (weight_g / weight_v.pow(2).sum(dim=(0, 1), keepdim=True).sqrt())
    h = F.conv1d(hidden_states.transpose(1, 2), weight, conv_bias, padding=64, groups=16)
    h = F.gelu(h[:, :, :-1]).transpose(1, 2)
    return hidden_states + h
