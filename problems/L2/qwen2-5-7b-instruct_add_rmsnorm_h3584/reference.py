import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['residual'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
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
def run(hidden_states, residual, weight):
    acc = _acc(hidden_states)
    summed = hidden_states.to(acc) + residual.to(acc)
    new_residual = summed.to(residual.dtype)
    variance = summed.pow(2).mean(-1, keepdim=True)
    normed = (summed * torch.rsqrt(variance + 1e-06)).to(hidden_states.dtype) * weight
    return normed, new_residual
