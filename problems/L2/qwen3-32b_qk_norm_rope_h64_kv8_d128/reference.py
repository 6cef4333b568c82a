import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['q_dim'])
    dt = torch.bfloat16
    out['query'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_tokens'], a['kv_dim'])
    dt = torch.bfloat16
    out['key'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['q_norm'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['k_norm'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['num_tokens'],)
    dt = torch.int64
    out['positions'] = (torch.randint(0, 32768, shape, device=device)).to(dt)
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
def run(query, key, q_norm, k_norm, positions):
    t = query.shape[0]
    q = _rmsnorm(query.view(t, -1, 128), q_norm, 1e-06)
    k = _rmsnorm(key.view(t, -1, 128), k_norm, 1e-06)
    inv_freq = 1.0 / (1000000.0 ** (torch.arange(0, 128, 2, device=query.device, dtype=torch.float64) / 128))
    freqs = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None].to(query.dtype), emb.sin()[:, None].to(query.dtype)
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
