import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['d_inner'], a['state_size'])
    dt = torch.float32
    out['state'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['d_inner'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['d_inner'])
    dt = torch.bfloat16
    out['dt'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['d_inner'], a['state_size'])
    dt = torch.float32
    out['A'] = (-torch.arange(1, shape[1] + 1, device=device, dtype=torch.float32).expand(shape) * (torch.rand(shape, device=device) * 0.5 + 0.75)).to(dt)
    shape = (a['batch_size'], a['state_size'])
    dt = torch.bfloat16
    out['B'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['state_size'])
    dt = torch.bfloat16
    out['C'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['d_inner'],)
    dt = torch.float32
    out['D'] = (torch.rand(shape, device=device) + 0.5).to(dt)
    shape = (a['batch_size'], a['d_inner'])
    dt = torch.bfloat16
    out['z'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['d_inner'],)
    dt = torch.float32
    out['dt_bias'] = ((lambda d: d + torch.log(-torch.expm1(-d)))(torch.exp(torch.rand(shape, device=device) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)))).to(dt)
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
def run(state, x, dt, A, B, C, D, z, dt_bias):
    """mamba_selective_state_update (Jamba decode step): dt_softplus, D and the z gate; state [b, d, n] fp32."""
    acc = torch.float64 if state.dtype == torch.float64 else torch.float32
    dt = F.softplus(dt.to(acc) + dt_bias.to(acc))  # [b, d]
    dA = torch.exp(dt[..., None] * A.to(acc))
    xf = x.to(acc)
    new_state = state.to(acc) * dA + (dt * xf)[..., None] * B.to(acc)[:, None, :]
    out = (new_state * C.to(acc)[:, None, :]).sum(-1) + xf * D.to(acc)
    return (out * F.silu(z.to(acc))).to(x.dtype), new_state.to(state.dtype)
