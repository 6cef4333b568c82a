import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_heads'], a['head_dim'], a['state_size'])
    dt = torch.float32
    out['state'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['head_dim'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'])
    dt = torch.bfloat16
    out['dt'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['num_heads'],)
    dt = torch.float32
    out['A_log'] = (torch.log(torch.rand(shape, device=device) * 15 + 1)).to(dt)
    shape = (a['batch_size'], a['num_groups'], a['state_size'])
    dt = torch.bfloat16
    out['B'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_groups'], a['state_size'])
    dt = torch.bfloat16
    out['C'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_heads'],)
    dt = torch.float32
    out['D'] = (torch.rand(shape, device=device) + 0.5).to(dt)
    shape = (a['num_heads'],)
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
def run(state, x, dt, A_log, B, C, D, dt_bias):
    """One decode step of a Mamba2 layer (mamba2_selective_state_update with dt_softplus and D; the z gate is
    applied later by the gated norm, so z=None as in the mixer)."""
    acc = torch.float64 if state.dtype == torch.float64 else torch.float32
    batch, heads, head_dim = x.shape
    groups = B.shape[1]
    dt = F.softplus(dt.to(acc) + dt_bias.to(acc))[..., None]  # [b, h, 1]
    A = -torch.exp(A_log.to(acc))
    dA = torch.exp(dt * A[:, None])[..., None]  # [b, h, 1, 1]
    Bh = B.to(acc).repeat_interleave(heads // groups, dim=1)  # [b, h, n]
    Ch = C.to(acc).repeat_interleave(heads // groups, dim=1)
    xf = x.to(acc)
    new_state = state.to(acc) * dA + (dt * xf)[..., None] * Bh[:, :, None, :]
    out = (new_state * Ch[:, :, None, :]).sum(-1) + xf * D.to(acc)[:, None]
    return out.to(x.dtype), new_state.to(state.dtype)
