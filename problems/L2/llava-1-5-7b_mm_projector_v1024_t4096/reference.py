import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_images'], a['num_patches'], a['vision_hidden'])
    dt = torch.float16
    out['image_features'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['text_hidden'], a['vision_hidden'])
    dt = torch.float16
    out['linear_1_weight'] = (torch.randn(shape, device=device) * 0.03125).to(dt)
    shape = (a['text_hidden'],)
    dt = torch.float16
    out['linear_1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['text_hidden'], a['text_hidden'])
    dt = torch.float16
    out['linear_2_weight'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['text_hidden'],)
    dt = torch.float16
    out['linear_2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(image_features, linear_1_weight, linear_1_bias, linear_2_weight, linear_2_bias):
    x = image_features[:, 1:]
    return F.linear(F.gelu(F.linear(x, linear_1_weight, linear_1_bias)), linear_2_weight, linear_2_bias)
