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
    dt = torch.float32
    out['weight'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['batch_size'], a['channels'], a['seq_len'])
    dt = torch.bfloat16
    out['grad_output'] = (torch.randn(shape, device=device) * 1.0).to(dt)
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


def run(x, weight, bias, grad_output):
    """Backward of causal_conv1d_fn(x, weight, bias, activation=silu): grads of x, weight and bias (fp32 sums)."""
    acc = _acc(x)
    with torch.enable_grad():
        xv = x.detach().to(acc).requires_grad_()
        wv = weight.detach().to(acc).requires_grad_()
        bv = bias.detach().to(acc).requires_grad_()
        seq_len = x.shape[-1]
        out = F.silu(F.conv1d(xv, wv[:, None, :], bv, padding=wv.shape[-1] - 1, groups=xv.shape[1])[..., :seq_len])
        gx, gw, gb = torch.autograd.grad(out, (xv, wv, bv), grad_output.to(acc))
    return gx.to(x.dtype), gw.to(weight.dtype), gb.to(bias.dtype)
