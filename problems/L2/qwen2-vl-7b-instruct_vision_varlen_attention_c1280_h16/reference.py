import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['embed_dim'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['embed_dim'],)
    dt = torch.bfloat16
    out['norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['embed_dim'],)
    dt = torch.bfloat16
    out['norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['three_embed'], a['embed_dim'])
    dt = torch.bfloat16
    out['qkv_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['three_embed'],)
    dt = torch.bfloat16
    out['qkv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['embed_dim'], a['embed_dim'])
    dt = torch.bfloat16
    out['proj_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['embed_dim'],)
    dt = torch.bfloat16
    out['proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
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
def run(hidden_states, norm_weight, norm_bias, qkv_weight, qkv_bias, proj_weight, proj_bias, grid_thw):
    n, d = hidden_states.shape
    heads = 16
    cos, sin = _vision_rope(grid_thw, d // heads, 2, 10000.0, hidden_states)
    sizes = torch.repeat_interleave(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0])
    cu_seqlens = F.pad(sizes.cumsum(0), (1, 0))
    h = F.layer_norm(hidden_states, (d,), norm_weight, norm_bias, 1e-06)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).reshape(n, 3, heads, -1).permute(1, 0, 2, 3).unbind(0)
    q, k = _apply_rope_vision(q, cos, sin), _apply_rope_vision(k, cos, sin)
    o = _varlen_attention(q, k, v, cu_seqlens)
    return hidden_states + F.linear(o.reshape(n, d), proj_weight, proj_bias)
