import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_heads'], a['num_tokens'], a['head_dim'])
    dt = torch.bfloat16
    out['query'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['num_tokens'], a['head_dim'])
    dt = torch.bfloat16
    out['key'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['num_tokens'], a['head_dim'])
    dt = torch.bfloat16
    out['value'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['rel_len'], a['head_dim'])
    dt = torch.bfloat16
    out['rel_pos_h'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['rel_len'], a['head_dim'])
    dt = torch.bfloat16
    out['rel_pos_w'] = (torch.randn(shape, device=device) * 0.1).to(dt)
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


@torch.no_grad()
def run(query, key, value, rel_pos_h, rel_pos_w):
    b, heads, n, hd = query.shape
    acc = _acc(query)
    side = (rel_pos_h.shape[0] + 1) // 2
    q, k, v = (t.reshape(b * heads, n, hd).to(acc) for t in (query, key, value))
    attn = (q * hd ** -0.5) @ k.transpose(-2, -1)
    # get_rel_pos (table length 2 * side - 1: no resizing) and add_decomposed_rel_pos
    idx = torch.arange(side, device=q.device)[:, None] - torch.arange(side, device=q.device)[None, :] + (side - 1)
    r_q = q.reshape(b * heads, side, side, hd)
    rel_h = torch.einsum("bhwc,hkc->bhwk", r_q, rel_pos_h.to(acc)[idx])
    rel_w = torch.einsum("bhwc,wkc->bhwk", r_q, rel_pos_w.to(acc)[idx])
    attn = attn.view(b * heads, side, side, side, side) + rel_h[:, :, :, :, None] + rel_w[:, :, :, None, :]
    attn = attn.view(b * heads, n, n).softmax(dim=-1)
    return (attn @ v).view(b, heads, n, hd).to(query.dtype)
