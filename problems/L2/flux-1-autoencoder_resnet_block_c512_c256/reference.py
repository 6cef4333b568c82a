import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['in_channels'], a['height'], a['width'])
    dt = torch.float32
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['in_channels'],)
    dt = torch.float32
    out['norm1_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['in_channels'],)
    dt = torch.float32
    out['norm1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_channels'], a['in_channels'], a['three'], a['three'])
    dt = torch.float32
    out['conv1_weight'] = (torch.randn(shape, device=device) * 0.01473139127471974).to(dt)
    shape = (a['out_channels'],)
    dt = torch.float32
    out['conv1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_channels'],)
    dt = torch.float32
    out['norm2_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['out_channels'],)
    dt = torch.float32
    out['norm2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_channels'], a['out_channels'], a['three'], a['three'])
    dt = torch.float32
    out['conv2_weight'] = (torch.randn(shape, device=device) * 0.020833333333333332).to(dt)
    shape = (a['out_channels'],)
    dt = torch.float32
    out['conv2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_channels'], a['in_channels'], a['one'], a['one'])
    dt = torch.float32
    out['nin_shortcut_weight'] = (torch.randn(shape, device=device) * 0.04419417382415922).to(dt)
    shape = (a['out_channels'],)
    dt = torch.float32
    out['nin_shortcut_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(x, norm1_weight, norm1_bias, conv1_weight, conv1_bias, norm2_weight, norm2_bias, conv2_weight, conv2_bias, nin_shortcut_weight, nin_shortcut_bias):
    h = F.silu(F.group_norm(x, 32, norm1_weight, norm1_bias, 1e-06))
    h = F.conv2d(h, conv1_weight, conv1_bias, padding=1)
    h = F.silu(F.group_norm(h, 32, norm2_weight, norm2_bias, 1e-06))
    h = F.conv2d(h, conv2_weight, conv2_bias, padding=1)
    return F.conv2d(x, nin_shortcut_weight, nin_shortcut_bias) + h
