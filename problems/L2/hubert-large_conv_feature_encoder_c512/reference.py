import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_samples'])
    dt = torch.float32
    out['input_values'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['c0'], a['in1'], a['k0'])
    dt = torch.float32
    out['conv0_weight'] = (torch.randn(shape, device=device) * 0.31622776601683794).to(dt)
    shape = (a['c0'],)
    dt = torch.float32
    out['conv0_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c0'],)
    dt = torch.float32
    out['ln0_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['c0'],)
    dt = torch.float32
    out['ln0_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c1'], a['c0'], a['k1'])
    dt = torch.float32
    out['conv1_weight'] = (torch.randn(shape, device=device) * 0.02551551815399144).to(dt)
    shape = (a['c1'],)
    dt = torch.float32
    out['conv1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c1'],)
    dt = torch.float32
    out['ln1_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['c1'],)
    dt = torch.float32
    out['ln1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c2'], a['c1'], a['k2'])
    dt = torch.float32
    out['conv2_weight'] = (torch.randn(shape, device=device) * 0.02551551815399144).to(dt)
    shape = (a['c2'],)
    dt = torch.float32
    out['conv2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c2'],)
    dt = torch.float32
    out['ln2_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['c2'],)
    dt = torch.float32
    out['ln2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c3'], a['c2'], a['k3'])
    dt = torch.float32
    out['conv3_weight'] = (torch.randn(shape, device=device) * 0.02551551815399144).to(dt)
    shape = (a['c3'],)
    dt = torch.float32
    out['conv3_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c3'],)
    dt = torch.float32
    out['ln3_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['c3'],)
    dt = torch.float32
    out['ln3_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c4'], a['c3'], a['k4'])
    dt = torch.float32
    out['conv4_weight'] = (torch.randn(shape, device=device) * 0.02551551815399144).to(dt)
    shape = (a['c4'],)
    dt = torch.float32
    out['conv4_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c4'],)
    dt = torch.float32
    out['ln4_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['c4'],)
    dt = torch.float32
    out['ln4_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c5'], a['c4'], a['k5'])
    dt = torch.float32
    out['conv5_weight'] = (torch.randn(shape, device=device) * 0.03125).to(dt)
    shape = (a['c5'],)
    dt = torch.float32
    out['conv5_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c5'],)
    dt = torch.float32
    out['ln5_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['c5'],)
    dt = torch.float32
    out['ln5_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c6'], a['c5'], a['k6'])
    dt = torch.float32
    out['conv6_weight'] = (torch.randn(shape, device=device) * 0.03125).to(dt)
    shape = (a['c6'],)
    dt = torch.float32
    out['conv6_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['c6'],)
    dt = torch.float32
    out['ln6_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['c6'],)
    dt = torch.float32
    out['ln6_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(input_values, conv0_weight, conv0_bias, ln0_weight, ln0_bias, conv1_weight, conv1_bias, ln1_weight, ln1_bias, conv2_weight, conv2_bias, ln2_weight, ln2_bias, conv3_weight, conv3_bias, ln3_weight, ln3_bias, conv4_weight, conv4_bias, ln4_weight, ln4_bias, conv5_weight, conv5_bias, ln5_weight, ln5_bias, conv6_weight, conv6_bias, ln6_weight, ln6_bias):
    x = input_values[:, None]
    x = F.conv1d(x, conv0_weight, conv0_bias, stride=5)
    x = F.gelu(F.layer_norm(x.transpose(1, 2), (x.shape[1],), ln0_weight, ln0_bias, 1e-05).transpose(1, 2))
    x = F.conv1d(x, conv1_weight, conv1_bias, stride=2)
    x = F.gelu(F.layer_norm(x.transpose(1, 2), (x.shape[1],), ln1_weight, ln1_bias, 1e-05).transpose(1, 2))
    x = F.conv1d(x, conv2_weight, conv2_bias, stride=2)
    x = F.gelu(F.layer_norm(x.transpose(1, 2), (x.shape[1],), ln2_weight, ln2_bias, 1e-05).transpose(1, 2))
    x = F.conv1d(x, conv3_weight, conv3_bias, stride=2)
    x = F.gelu(F.layer_norm(x.transpose(1, 2), (x.shape[1],), ln3_weight, ln3_bias, 1e-05).transpose(1, 2))
    x = F.conv1d(x, conv4_weight, conv4_bias, stride=2)
    x = F.gelu(F.layer_norm(x.transpose(1, 2), (x.shape[1],), ln4_weight, ln4_bias, 1e-05).transpose(1, 2))
    x = F.conv1d(x, conv5_weight, conv5_bias, stride=2)
    x = F.gelu(F.layer_norm(x.transpose(1, 2), (x.shape[1],), ln5_weight, ln5_bias, 1e-05).transpose(1, 2))
    x = F.conv1d(x, conv6_weight, conv6_bias, stride=2)
    x = F.gelu(F.layer_norm(x.transpose(1, 2), (x.shape[1],), ln6_weight, ln6_bias, 1e-05).transpose(1, 2))
    return x
