import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_frames'], a['feat_in'])
    dt = torch.float32
    out['audio_signal'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['channels'], a['one'], a['k3'], a['k3'])
    dt = torch.float32
    out['conv0_weight'] = (torch.randn(shape, device=device) * 0.3333333333333333).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['conv0_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['one'], a['k3'], a['k3'])
    dt = torch.float32
    out['dw1_weight'] = (torch.randn(shape, device=device) * 0.3333333333333333).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['dw1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['channels'], a['k1'], a['k1'])
    dt = torch.float32
    out['pw1_weight'] = (torch.randn(shape, device=device) * 0.0625).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['pw1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['one'], a['k3'], a['k3'])
    dt = torch.float32
    out['dw2_weight'] = (torch.randn(shape, device=device) * 0.3333333333333333).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['dw2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['channels'], a['k1'], a['k1'])
    dt = torch.float32
    out['pw2_weight'] = (torch.randn(shape, device=device) * 0.0625).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['pw2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['d_model'], a['flat'])
    dt = torch.float32
    out['out_weight'] = (torch.randn(shape, device=device) * 0.01976423537605237).to(dt)
    shape = (a['d_model'],)
    dt = torch.float32
    out['out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(audio_signal, conv0_weight, conv0_bias, dw1_weight, dw1_bias, pw1_weight, pw1_bias, dw2_weight, dw2_bias,
        pw2_weight, pw2_bias, out_weight, out_bias):
    channels = conv0_weight.shape[0]
    x = F.relu(F.conv2d(audio_signal[:, None], conv0_weight, conv0_bias, stride=2, padding=1))
    x = F.conv2d(x, dw1_weight, dw1_bias, stride=2, padding=1, groups=channels)
    x = F.relu(F.conv2d(x, pw1_weight, pw1_bias))
    x = F.conv2d(x, dw2_weight, dw2_bias, stride=2, padding=1, groups=channels)
    x = F.relu(F.conv2d(x, pw2_weight, pw2_bias))
    b, c, t, f = x.shape
    return F.linear(x.transpose(1, 2).reshape(b, t, c * f), out_weight, out_bias)
