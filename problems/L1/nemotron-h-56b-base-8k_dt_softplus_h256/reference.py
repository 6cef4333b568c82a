import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['num_heads'])
    dt = torch.bfloat16
    out['dt'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['num_heads'],)
    dt = torch.float32
    out['dt_bias'] = ((lambda d: d + torch.log(-torch.expm1(-d)))(torch.exp(torch.rand(shape, device=device) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)))).to(dt)
    shape = (a['num_heads'],)
    dt = torch.float32
    out['A_log'] = (torch.log(torch.rand(shape, device=device) * 15 + 1)).to(dt)
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
def run(dt, dt_bias, A_log):
    """dt = softplus(dt + dt_bias) (dt_limit (0, inf)), dA = dt * A with A = -exp(A_log); both fp32."""
    acc = torch.float64 if dt_bias.dtype == torch.float64 else torch.float32
    dt = F.softplus(dt.to(acc) + dt_bias.to(acc))
    return dt, dt * -torch.exp(A_log.to(acc))
