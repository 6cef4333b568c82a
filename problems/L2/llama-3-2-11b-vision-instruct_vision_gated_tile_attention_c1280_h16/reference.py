import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['max_num_tiles'], a['padded'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_state'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['max_num_tiles'])
    dt = torch.int64
    out['aspect_ratio_mask'] = ((torch.arange(shape[1], device=device)[None, :] < (torch.arange(shape[0], device=device)[:, None] % shape[1] + 1)).long()).to(dt)
    shape = (a['one'],)
    dt = torch.int64
    out['num_patches'] = (torch.tensor([a['tile_tokens']], device=device)).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ln_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ln_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['q_proj'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['k_proj'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['v_proj'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['o_proj'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['one'],)
    dt = torch.bfloat16
    out['gate_attn'] = (torch.randn(shape, device=device) * 0.5 + 1.0).to(dt)
    return out


@torch.no_grad()
def run(hidden_state, aspect_ratio_mask, num_patches, ln_weight, ln_bias, q_proj, k_proj, v_proj, o_proj,
        gate_attn):
    b, tiles, padded, d = hidden_state.shape
    heads = 16
    # _prepare_aspect_ratio_attention_mask: padding tiles and padding patches masked against each other
    mask = aspect_ratio_mask.view(b, tiles, 1, 1).to(hidden_state.dtype).repeat(1, 1, padded, 1)
    mask[:, :, int(num_patches[0]):] = 0
    mask = (1 - mask).reshape(b, tiles * padded, 1)
    mask = (mask @ mask.transpose(-1, -2) * torch.finfo(hidden_state.dtype).min).unsqueeze(1)
    x = hidden_state.reshape(b, tiles * padded, d)
    h = F.layer_norm(x, (d,), ln_weight, ln_bias, 1e-05)
    q, k, v = (F.linear(h, w).view(b, -1, heads, d // heads).transpose(1, 2) for w in (q_proj, k_proj, v_proj))
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(b, -1, d)
    return (x + gate_attn.tanh() * F.linear(o, o_proj)).view(b, tiles, padded, d)
