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




def _vision_rope(grid_thw, head_dim, merge, theta, ref):
    """cos/sin [tokens, head_dim] of Qwen2-VL's rot_pos_emb: (row, column) ids of every patch in 2x2
    merge-block order, VisionRotaryEmbedding(head_dim // 2) (fp32 tables)."""
    acc = _acc(ref)
    ids = []
    for t, h, w in grid_thw.tolist():
        hpos = torch.arange(h, device=ref.device)[:, None].expand(h, w)
        wpos = torch.arange(w, device=ref.device)[None, :].expand(h, w)
        hpos = hpos.reshape(h // merge, merge, w // merge, merge).permute(0, 2, 1, 3).flatten()
        wpos = wpos.reshape(h // merge, merge, w // merge, merge).permute(0, 2, 1, 3).flatten()
        ids.append(torch.stack([hpos, wpos], dim=-1).repeat(t, 1))
    ids = torch.cat(ids)
    dim = head_dim // 2
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    table = torch.arange(int(grid_thw[:, 1:].max()), device=ref.device, dtype=acc)[:, None] * inv_freq[None, :]
    emb = table[ids].flatten(1)
    emb = torch.cat((emb, emb), dim=-1)
    return emb.cos(), emb.sin()


def _apply_rope_vision(x, cos, sin):
    """apply_rotary_pos_emb_vision: x [tokens, heads, head_dim] rotated in fp32, back to x's dtype."""
    xf = x.to(_acc(x))
    return (xf * cos[:, None, :] + _rotate_half(xf) * sin[:, None, :]).to(x.dtype)


def _varlen_attention(q, k, v, cu_seqlens):
    """Bidirectional attention within each [cu_seqlens[i], cu_seqlens[i+1]) segment of q/k/v [tokens, heads, d]
    (flash_attn_varlen_func); segments of one length run as one batch."""
    out = torch.empty_like(q)
    lengths = cu_seqlens[1:] - cu_seqlens[:-1]
    starts = cu_seqlens[:-1]
    for length in torch.unique(lengths).tolist():
        if length == 0:
            continue
        idx = starts[lengths == length][:, None] + torch.arange(length, device=q.device)[None, :]
        qs, ks, vs = (t[idx].transpose(1, 2) for t in (q, k, v))
        o = F.scaled_dot_product_attention(qs, ks, vs)
        out[idx.reshape(-1)] = o.transpose(1, 2).reshape(-1, q.shape[1], q.shape[2])
    return out


@torch.no_grad()
def run(query, key, grid_thw):
    cos, sin = _vision_rope(grid_thw, query.shape[-1], 2, 10000.0, query)
    return _apply_rope_vision(query, cos, sin), _apply_rope_vision(key, cos, sin)
