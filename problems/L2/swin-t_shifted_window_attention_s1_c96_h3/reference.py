import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['height'], a['width'], a['channels'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['three_channels'], a['channels'])
    dt = torch.bfloat16
    out['qkv_weight'] = (torch.randn(shape, device=device) * 0.10206207261596575).to(dt)
    shape = (a['three_channels'],)
    dt = torch.bfloat16
    out['qkv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['table_size'], a['num_heads'])
    dt = torch.bfloat16
    out['relative_position_bias_table'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['channels'], a['channels'])
    dt = torch.bfloat16
    out['proj_weight'] = (torch.randn(shape, device=device) * 0.10206207261596575).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, qkv_weight, qkv_bias, relative_position_bias_table, proj_weight, proj_bias):
    b, height, width, c = hidden_states.shape
    ws, shift, heads = 7, 7 // 2, 3
    hd = c // heads
    n = ws * ws
    nh, nw = height // ws, width // ws
    x = torch.roll(hidden_states, shifts=(-shift, -shift), dims=(1, 2))
    x = x.view(b, nh, ws, nw, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(b * nh * nw, n, c)
    q, k, v = F.linear(x, qkv_weight, qkv_bias).view(-1, n, 3, heads, hd).permute(2, 0, 3, 1, 4).unbind(0)
    # relative position bias, as SwinSelfAttention builds relative_position_index
    coords = torch.stack(torch.meshgrid(torch.arange(ws, device=x.device), torch.arange(ws, device=x.device),
                                        indexing="ij")).flatten(1)
    rel = coords[:, :, None] - coords[:, None, :]
    index = (rel[0] + ws - 1) * (2 * ws - 1) + (rel[1] + ws - 1)
    bias = relative_position_bias_table[index.reshape(-1)].view(n, n, heads).permute(2, 0, 1)
    # shifted-window mask (SW-MSA): tokens from different regions of the rolled map do not attend
    region = torch.zeros(height, width, device=x.device, dtype=x.dtype)
    count = 0
    for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
        for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
            region[hs, wsl] = count
            count += 1
    region = region.view(nh, ws, nw, ws).permute(0, 2, 1, 3).reshape(nh * nw, n)
    mask = (region[:, None, :] != region[:, :, None]).to(x.dtype) * -100.0
    attn_mask = bias[None, None] + mask[None, :, None]
    q, k, v = (t.reshape(b, nh * nw, heads, n, hd) for t in (q, k, v))
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
    o = F.linear(o.transpose(2, 3).reshape(b * nh * nw, n, c), proj_weight, proj_bias)
    o = o.view(b, nh, nw, ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(b, height, width, c)
    return torch.roll(o, shifts=(shift, shift), dims=(1, 2))
