import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['seq_len'], a['qkv_dim'])
    dt = torch.bfloat16
    out['qkv'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['half_dim'],)
    dt = torch.float32
    out['ext_factors'] = (1.0 + torch.rand(shape, device=device) * torch.linspace(0.0, 40.0, shape[0], device=device)).to(dt)
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
def run(qkv, ext_factors):
    b, s, _ = qkv.shape
    q, k, v = qkv.view(b, s, 3, 32, 96).permute(2, 0, 3, 1, 4).unbind(0)
    inv_freq = 1.0 / (ext_factors.to(torch.float64) * 10000.0 ** (torch.arange(0, 96, 2, device=qkv.device, dtype=torch.float64) / 96))
    freqs = torch.arange(s, device=qkv.device, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = (emb.cos() * 1.1902380714238083).to(qkv.dtype), (emb.sin() * 1.1902380714238083).to(qkv.dtype)
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin, v.contiguous()
