import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_images'], a['crops'], a['patches'], a['image_dim'])
    dt = torch.bfloat16
    out['image_features'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['merged_dim'],)
    dt = torch.bfloat16
    out['sub_gn'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['merged_dim'],)
    dt = torch.bfloat16
    out['glb_gn'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'], a['merged_dim'])
    dt = torch.bfloat16
    out['proj1_weight'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['proj1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['proj2_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['proj2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['two'],)
    dt = torch.int64
    out['crop_grid'] = (torch.tensor([a['h_crop'], a['w_crop']], device=device)).to(dt)
    return out


def _hd_2x2merge(x, h_crop, w_crop):
    n, tokens, c = x.shape
    side = int(math.isqrt(tokens))
    images = n // (h_crop * w_crop)
    x = x.reshape(n, side // 2, 2, side // 2, 2, c).permute(0, 1, 3, 2, 4, 5).reshape(n, -1, 4 * c)
    x = x.reshape(images, h_crop, w_crop, side // 2, side // 2, -1).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(images, h_crop * side // 2, w_crop * side // 2, 4 * c)


def _newline(x, sub_gn):
    images, h, w, c = x.shape
    return torch.cat([x, sub_gn.view(1, 1, 1, c).expand(images, h, 1, c)], dim=2).reshape(images, -1, c)


@torch.no_grad()
def run(image_features, sub_gn, glb_gn, proj1_weight, proj1_bias, proj2_weight, proj2_bias, crop_grid):
    h_crop, w_crop = crop_grid.tolist()
    glb = _newline(_hd_2x2merge(image_features[:, 0], 1, 1), sub_gn)
    parts = []
    for i in range(image_features.shape[0]):
        sub = _newline(_hd_2x2merge(image_features[i, 1:1 + h_crop * w_crop], h_crop, w_crop), sub_gn)
        parts += [sub[0], glb_gn.view(1, -1), glb[i]]
    x = torch.cat(parts, dim=0)
    return F.linear(F.gelu(F.linear(x, proj1_weight, proj1_bias)), proj2_weight, proj2_bias)
