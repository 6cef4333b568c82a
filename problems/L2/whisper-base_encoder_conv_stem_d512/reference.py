import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_mel_bins'], a['mel_frames'])
    dt = torch.float32
    out['input_features'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['d_model'], a['num_mel_bins'], a['kernel'])
    dt = torch.float32
    out['conv1_weight'] = (torch.randn(shape, device=device) * 0.06454972243679029).to(dt)
    shape = (a['d_model'],)
    dt = torch.float32
    out['conv1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['d_model'], a['d_model'], a['kernel'])
    dt = torch.float32
    out['conv2_weight'] = (torch.randn(shape, device=device) * 0.02551551815399144).to(dt)
    shape = (a['d_model'],)
    dt = torch.float32
    out['conv2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['positions'], a['d_model'])
    dt = torch.float32
    out['embed_positions'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    return out


@torch.no_grad()
def run(input_features, conv1_weight, conv1_bias, conv2_weight, conv2_bias, embed_positions):
    h = F.gelu(F.conv1d(input_features, conv1_weight, conv1_bias, padding=1))
    h = F.gelu(F.conv1d(h, conv2_weight, conv2_bias, stride=2, padding=1))
    return h.permute(0, 2, 1) + embed_positions
