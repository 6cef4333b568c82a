import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['d_inner'], a['seq_len'])
    dt = torch.bfloat16
    out['u'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['d_inner'], a['seq_len'])
    dt = torch.bfloat16
    out['delta'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['d_inner'], a['state_size'])
    dt = torch.float32
    out['A'] = (-torch.arange(1, shape[1] + 1, device=device, dtype=torch.float32).expand(shape) * (torch.rand(shape, device=device) * 0.5 + 0.75)).to(dt)
    shape = (a['batch_size'], a['state_size'], a['seq_len'])
    dt = torch.bfloat16
    out['B'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['state_size'], a['seq_len'])
    dt = torch.bfloat16
    out['C'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['d_inner'],)
    dt = torch.float32
    out['D'] = (torch.rand(shape, device=device) + 0.5).to(dt)
    shape = (a['batch_size'], a['d_inner'], a['seq_len'])
    dt = torch.bfloat16
    out['z'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['d_inner'],)
    dt = torch.float32
    out['delta_bias'] = ((lambda d: d + torch.log(-torch.expm1(-d)))(torch.exp(torch.rand(shape, device=device) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)))).to(dt)
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
def run(u, delta, A, B, C, D, z, delta_bias):
    """mamba_selective_scan (sequential path) with delta_bias, delta_softplus=True, D and the z gate.

    u, delta, z: [b, d, t]; A: [d, n] (already -exp(A_log)); B, C: [b, n, t]. The state stays fp32.
    """
    acc = _acc(A)
    dt = F.softplus(delta.to(acc) + delta_bias.to(acc)[:, None])  # [b, d, t]
    uf = u.to(acc)
    Af, Bf, Cf = A.to(acc), B.to(acc), C.to(acc)
    dtu = dt * uf
    state = torch.zeros(u.shape[0], u.shape[1], A.shape[1], dtype=acc, device=u.device)
    ys = []
    for t in range(u.shape[-1]):
        state = torch.exp(Af * dt[:, :, t, None]) * state + dtu[:, :, t, None] * Bf[:, None, :, t]
        ys.append((state * Cf[:, None, :, t]).sum(-1))
    y = torch.stack(ys, dim=-1) + uf * D.to(acc)[:, None]
    return (y * F.silu(z.to(acc))).to(u.dtype)
