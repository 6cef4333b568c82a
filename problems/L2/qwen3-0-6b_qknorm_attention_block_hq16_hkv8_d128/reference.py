import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['seq_len'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['q_dim'], a['hidden_size'])
    dt = torch.bfloat16
    out['q_proj'] = (torch.randn(shape, device=device) * 0.03125).to(dt)
    shape = (a['kv_dim'], a['hidden_size'])
    dt = torch.bfloat16
    out['k_proj'] = (torch.randn(shape, device=device) * 0.03125).to(dt)
    shape = (a['kv_dim'], a['hidden_size'])
    dt = torch.bfloat16
    out['v_proj'] = (torch.randn(shape, device=device) * 0.03125).to(dt)
    shape = (a['hidden_size'], a['q_dim'])
    dt = torch.bfloat16
    out['o_proj'] = (torch.randn(shape, device=device) * 0.02209708691207961).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['q_norm'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['k_norm'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
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
def run(hidden_states, q_proj, k_proj, v_proj, o_proj, q_norm, k_norm):
    b, s, _ = hidden_states.shape
    q = F.linear(hidden_states, q_proj).view(b, s, -1, 128)
    k = F.linear(hidden_states, k_proj).view(b, s, -1, 128)
    v = F.linear(hidden_states, v_proj).view(b, s, -1, 128)
    q = _rmsnorm(q, q_norm, 1e-06)
    k = _rmsnorm(k, k_norm, 1e-06)
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    cos, sin = _rope_tables(s, 128, 1000000.0, hidden_states)
    q = q * cos + _rotate_half(q) * sin
    k = k * cos + _rotate_half(k) * sin
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F.linear(o.transpose(1, 2).reshape(b, s, -1), o_proj)
