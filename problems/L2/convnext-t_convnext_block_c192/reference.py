import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['channels'], a['height'], a['width'])
    dt = torch.float32
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['channels'], a['one'], a['kernel'], a['kernel'])
    dt = torch.float32
    out['dwconv_weight'] = (torch.randn(shape, device=device) * 0.14285714285714285).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['dwconv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['mlp_hidden'], a['channels'])
    dt = torch.float32
    out['pwconv1_weight'] = (torch.randn(shape, device=device) * 0.07216878364870322).to(dt)
    shape = (a['mlp_hidden'],)
    dt = torch.float32
    out['pwconv1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['mlp_hidden'])
    dt = torch.float32
    out['pwconv2_weight'] = (torch.randn(shape, device=device) * 0.03608439182435161).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['pwconv2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['layer_scale'] = (torch.randn(shape, device=device) * 0.3 + 0.5).to(dt)
    return out


@torch.no_grad()
def run(x, dwconv_weight, dwconv_bias, norm_weight, norm_bias, pwconv1_weight, pwconv1_bias, pwconv2_weight,
        pwconv2_bias, layer_scale):
    c = x.shape[1]
    h = F.conv2d(x, dwconv_weight, dwconv_bias, padding=3, groups=c).permute(0, 2, 3, 1)
    h = F.layer_norm(h, (c,), norm_weight, norm_bias, 1e-06)
    h = F.linear(F.gelu(F.linear(h, pwconv1_weight, pwconv1_bias)), pwconv2_weight, pwconv2_bias)
    return x + (layer_scale * h).permute(0, 3, 1, 2)
