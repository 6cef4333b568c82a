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
    out['pwconv1_weight'] = (torch.randn(shape, device=device) * 0.04419417382415922).to(dt)
    shape = (a['mlp_hidden'],)
    dt = torch.float32
    out['pwconv1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['mlp_hidden'])
    dt = torch.float32
    out['pwconv2_weight'] = (torch.randn(shape, device=device) * 0.02209708691207961).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['pwconv2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['layer_scale'] = (torch.randn(shape, device=device) * 0.3 + 0.5).to(dt)
    shape = (a['batch_size'], a['channels'], a['height'], a['width'])
    dt = torch.float32
    out['grad_output'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    return out


def run(x, dwconv_weight, dwconv_bias, norm_weight, norm_bias, pwconv1_weight, pwconv1_bias, pwconv2_weight,
        pwconv2_bias, layer_scale, grad_output):
    with torch.enable_grad():
        params = [t.detach().requires_grad_() for t in (x, dwconv_weight, dwconv_bias, norm_weight, norm_bias,
                                                         pwconv1_weight, pwconv1_bias, pwconv2_weight, pwconv2_bias,
                                                         layer_scale)]
        xx, dw, db, nw, nb, w1, b1, w2, b2, gamma = params
        c = xx.shape[1]
        h = F.conv2d(xx, dw, db, padding=3, groups=c).permute(0, 2, 3, 1)
        h = F.linear(F.gelu(F.linear(F.layer_norm(h, (c,), nw, nb, 1e-06), w1, b1)), w2, b2)
        return torch.autograd.grad(xx + (gamma * h).permute(0, 3, 1, 2), params, grad_output)
