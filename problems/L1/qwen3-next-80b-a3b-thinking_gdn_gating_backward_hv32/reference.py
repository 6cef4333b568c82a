import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['num_v_heads'])
    dt = torch.bfloat16
    out['a'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_tokens'], a['num_v_heads'])
    dt = torch.bfloat16
    out['b'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_v_heads'],)
    dt = torch.float32
    out['A_log'] = (torch.log(torch.rand(shape, device=device) * 16 + 1e-3)).to(dt)
    shape = (a['num_v_heads'],)
    dt = torch.float32
    out['dt_bias'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['num_tokens'], a['num_v_heads'])
    dt = torch.float32
    out['grad_g'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_tokens'], a['num_v_heads'])
    dt = torch.bfloat16
    out['grad_beta'] = (torch.randn(shape, device=device) * 1.0).to(dt)
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


def run(a, b, A_log, dt_bias, grad_g, grad_beta):
    """Backward of g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b), written out as the fused kernel
    computes it: d softplus = sigmoid, dg/dA_log = g, d sigmoid = beta (1 - beta); parameter grads summed in fp32."""
    acc = _acc(A_log)
    x = a.to(acc) + dt_bias.to(acc)
    decay_rate = -A_log.to(acc).exp()
    g = decay_rate * F.softplus(x)
    gg = grad_g.to(acc)
    grad_a = gg * decay_rate * torch.sigmoid(x)
    beta = torch.sigmoid(b.to(acc))
    grad_b = grad_beta.to(acc) * beta * (1 - beta)
    return grad_a.to(a.dtype), grad_b.to(b.dtype), (gg * g).sum(0), grad_a.sum(0)
