import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['num_heads'], a['head_dim'])
    dt = torch.bfloat16
    out['query'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_tokens'], a['num_heads'], a['head_dim'])
    dt = torch.bfloat16
    out['key'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_images'], a['three'])
    dt = torch.int64
    out['grid_thw'] = (torch.tensor([[1, a['grid_h'], a['grid_w']], [1, a['grid_w'] // 2, a['grid_h'] // 2]] * a['num_pairs'], device=device)).to(dt)
    return out



def _acc(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def _rmsnorm(x, weight, eps):
    xf = x.to(_acc(x))
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rope_tables(seq_len, dim, theta, ref):
    """cos/sin [seq_len, dim] for positions 0..seq_len-1 (Hugging Face layout: halves repeated)."""
    acc = _acc(ref)
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    freqs = torch.arange(seq_len, device=ref.device, dtype=acc)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)




def _pixtral_cos_sin(grid_thw, dim, theta, side, ref):
    """PixtralRotaryEmbedding: a [side*side, dim] table whose first half of frequencies (even ones) follow the
    patch row and second half (odd ones) the column, indexed by position_ids_in_meshgrid (row * side + col)."""
    acc = _acc(ref)
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    pos = torch.arange(side, device=ref.device, dtype=acc)
    fh, fw = torch.outer(pos, freqs[::2]), torch.outer(pos, freqs[1::2])
    inv = torch.cat([fh[:, None, :].repeat(1, side, 1), fw[None, :, :].repeat(side, 1, 1)], dim=-1).reshape(-1, dim // 2)
    inv = torch.cat((inv, inv), dim=-1)
    ids = [(torch.arange(h, device=ref.device)[:, None] * side + torch.arange(w, device=ref.device)[None, :]).flatten()
           for _, h, w in grid_thw.tolist()]
    emb = inv[torch.cat(ids)]
    return emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)


@torch.no_grad()
def run(query, key, grid_thw):
    cos, sin = _pixtral_cos_sin(grid_thw, query.shape[-1], 10000.0, 64, query)
    cos, sin = cos[:, None], sin[:, None]
    return query * cos + _rotate_half(query) * sin, key * cos + _rotate_half(key) * sin
