import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['seq_len'], a['d_inner'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['d_inner'])
    dt = torch.bfloat16
    out['gate'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['proj_size'], a['d_inner'])
    dt = torch.bfloat16
    out['x_proj'] = (torch.randn(shape, device=device) * 0.011048543456039806).to(dt)
    shape = (a['d_inner'], a['dt_rank'])
    dt = torch.bfloat16
    out['dt_proj_weight'] = (torch.randn(shape, device=device) * 0.03125).to(dt)
    shape = (a['d_inner'],)
    dt = torch.float32
    out['dt_proj_bias'] = ((lambda d: d + torch.log(-torch.expm1(-d)))(torch.exp(torch.rand(shape, device=device) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)))).to(dt)
    shape = (a['dt_rank'],)
    dt = torch.bfloat16
    out['dt_norm_weight'] = (torch.rand(shape, device=device) + 0.5).to(dt)
    shape = (a['state_size'],)
    dt = torch.bfloat16
    out['b_norm_weight'] = (torch.rand(shape, device=device) + 0.5).to(dt)
    shape = (a['state_size'],)
    dt = torch.bfloat16
    out['c_norm_weight'] = (torch.rand(shape, device=device) + 0.5).to(dt)
    shape = (a['d_inner'], a['state_size'])
    dt = torch.float32
    out['A_log'] = (torch.log(torch.arange(1, shape[1] + 1, device=device, dtype=torch.float32).expand(shape) * (torch.rand(shape, device=device) * 0.5 + 0.75))).to(dt)
    shape = (a['d_inner'],)
    dt = torch.float32
    out['D'] = (torch.rand(shape, device=device) + 0.5).to(dt)
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
def run(hidden_states, gate, x_proj, dt_proj_weight, dt_proj_bias, dt_norm_weight, b_norm_weight, c_norm_weight,
        A_log, D):
    """JambaMambaMixer.forward after the conv: x_proj -> (dt, B, C), RMSNorm on each, dt_proj, selective scan, gate.

    hidden_states (the conv output) and gate: [b, t, d_inner]; returns the scan output [b, t, d_inner]
    (out_proj not included).
    """
    acc = _acc(hidden_states)
    rank, n = 256, 16
    proj = F.linear(hidden_states, x_proj)
    time_step, B, C = torch.split(proj, [rank, n, n], dim=-1)
    time_step = _rmsnorm(time_step, dt_norm_weight, 1e-06)
    B = _rmsnorm(B, b_norm_weight, 1e-06)
    C = _rmsnorm(C, c_norm_weight, 1e-06)
    dt = F.softplus(F.linear(time_step, dt_proj_weight).to(acc) + dt_proj_bias.to(acc))  # [b, t, d]
    A = -torch.exp(A_log.to(acc))  # [d, n]
    u = hidden_states.to(acc)
    Bf, Cf = B.to(acc), C.to(acc)
    dtu = dt * u
    state = torch.zeros(u.shape[0], u.shape[2], n, dtype=acc, device=u.device)
    ys = []
    for t in range(u.shape[1]):
        state = torch.exp(dt[:, t, :, None] * A) * state + dtu[:, t, :, None] * Bf[:, t, None, :]
        ys.append((state * Cf[:, t, None, :]).sum(-1))
    y = torch.stack(ys, dim=1) + u * D.to(acc)
    return (y * F.silu(gate.to(acc))).to(hidden_states.dtype)
