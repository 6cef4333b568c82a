import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['intermediate_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['fc1_weight'] = (torch.randn(shape, device=device) * 0.03608439182435161).to(dt)
    shape = (a['intermediate_size'],)
    dt = torch.bfloat16
    out['fc1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['intermediate_size'])
    dt = torch.bfloat16
    out['fc2_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['num_tokens'], a['hidden_size'])
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


def run(hidden_states, fc1_weight, fc1_bias, fc2_weight, grad_output):
    with torch.enable_grad():
        params = [t.detach().requires_grad_() for t in (hidden_states, fc1_weight, fc1_bias, fc2_weight)]
        x, w1, b1, w2 = params
        out = F.linear(F.gelu(F.linear(x, w1, b1)), w2)
        grads = torch.autograd.grad(out, params, grad_output)
    acc = _acc(grad_output)
    return (*grads, grad_output.to(acc).sum(0).to(grad_output.dtype))
