import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_heads'], a['num_chunks'], a['chunk_size'])
    dt = torch.float32
    out['dA'] = (-(torch.rand(shape, device=device) * 0.1 + 0.001)).to(dt)
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
def run(dA):
    """exp(segment_sum(dA)): L[..., i, j] = exp(sum_{j<t<=i} dA[t]) for j <= i, 0 above the diagonal."""
    x = dA.to(_acc(dA))
    length = x.shape[-1]
    x = x[..., None].expand(*x.shape, length)
    strict = torch.tril(torch.ones(length, length, dtype=torch.bool, device=x.device), diagonal=-1)
    x = x.masked_fill(~strict, 0)
    segsum = torch.cumsum(x, dim=-2)
    lower = torch.tril(torch.ones(length, length, dtype=torch.bool, device=x.device), diagonal=0)
    return torch.exp(segsum.masked_fill(~lower, -torch.inf))
