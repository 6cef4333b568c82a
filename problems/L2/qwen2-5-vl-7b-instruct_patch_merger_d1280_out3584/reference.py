import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_patches'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ln_q_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['merged_dim'], a['merged_dim'])
    dt = torch.bfloat16
    out['mlp0_weight'] = (torch.randn(shape, device=device) * 0.013975424859373685).to(dt)
    shape = (a['merged_dim'],)
    dt = torch.bfloat16
    out['mlp0_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_hidden_size'], a['merged_dim'])
    dt = torch.bfloat16
    out['mlp2_weight'] = (torch.randn(shape, device=device) * 0.013975424859373685).to(dt)
    shape = (a['out_hidden_size'],)
    dt = torch.bfloat16
    out['mlp2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
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
def run(hidden_states, ln_q_weight, mlp0_weight, mlp0_bias, mlp2_weight, mlp2_bias):
    x = _rmsnorm(hidden_states, ln_q_weight, 1e-06).view(-1, mlp0_weight.shape[1])
    return F.linear(F.gelu(F.linear(x, mlp0_weight, mlp0_bias)), mlp2_weight, mlp2_bias)
