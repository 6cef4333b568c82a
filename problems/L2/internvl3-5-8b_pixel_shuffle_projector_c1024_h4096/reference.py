import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tiles'], a['num_patches'], a['vit_hidden'])
    dt = torch.bfloat16
    out['vit_embeds'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['shuffled'],)
    dt = torch.bfloat16
    out['norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['shuffled'],)
    dt = torch.bfloat16
    out['norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['llm_hidden'], a['shuffled'])
    dt = torch.bfloat16
    out['fc1_weight'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['llm_hidden'],)
    dt = torch.bfloat16
    out['fc1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['llm_hidden'], a['llm_hidden'])
    dt = torch.bfloat16
    out['fc2_weight'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['llm_hidden'],)
    dt = torch.bfloat16
    out['fc2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(vit_embeds, norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    x = vit_embeds[:, 1:, :]
    n, tokens, c = x.shape
    side = int(math.isqrt(tokens))
    x = x.reshape(n, side, side, c)
    # pixel_shuffle(scale_factor=0.5), ps_version v2
    n, w, h, c = x.shape
    x = x.view(n, w, h // 2, c * 2).permute(0, 2, 1, 3).contiguous()
    x = x.view(n, h // 2, w // 2, c * 4).permute(0, 2, 1, 3).contiguous()
    x = x.reshape(n, -1, c * 4)
    x = F.layer_norm(x, (c * 4,), norm_weight, norm_bias, 1e-05)
    return F.linear(F.gelu(F.linear(x, fc1_weight, fc1_bias)), fc2_weight, fc2_bias)
