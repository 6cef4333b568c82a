import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['channels'], a['seq_len'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['channels'], a['kernel_size'])
    dt = torch.bfloat16
    out['weight'] = (torch.randn(shape, device=device) * 0.5).to(dt)
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
def run(x, weight):
    """causal_conv1d_fn: depthwise conv over time with kernel_size - 1 left padding, then SiLU. x: [b, channels, t]."""
    acc = _acc(x)
    seq_len = x.shape[-1]
    out = F.conv1d(x.to(acc), weight.to(acc)[:, None, :], None, padding=weight.shape[-1] - 1,
                   groups=x.shape[1])[..., :seq_len]
    return F.silu(out).to(x.dtype)
