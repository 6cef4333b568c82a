import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_tokens'], a['rope_dim'])
    dt = torch.bfloat16
    out['cos'] = (out.setdefault('_angles', (torch.randint(0, 4096, (shape[0], 1), device=device) + torch.arange(shape[0], device=device)[:, None]).double() * (10000.0 ** (-torch.arange(0, shape[1], 2, device=device).double() / shape[1])).repeat(2)[None, :shape[1]].repeat(1, 1)).cos()).to(dt)
    shape = (a['num_tokens'], a['rope_dim'])
    dt = torch.bfloat16
    out['sin'] = (out.pop('_angles').sin()).to(dt)
    shape = (a['q_dim'], a['hidden_size'])
    dt = torch.bfloat16
    out['q_proj'] = (torch.randn(shape, device=device) * 0.02209708691207961).to(dt)
    shape = (a['kv_a_dim'], a['hidden_size'])
    dt = torch.bfloat16
    out['kv_a_proj'] = (torch.randn(shape, device=device) * 0.02209708691207961).to(dt)
    shape = (a['kv_lora_rank'],)
    dt = torch.bfloat16
    out['kv_a_norm'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['kv_b_dim'], a['kv_lora_rank'])
    dt = torch.bfloat16
    out['kv_b_proj'] = (torch.randn(shape, device=device) * 0.04419417382415922).to(dt)
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


def _rope_interleaved(x, cos, sin):
    # DeepSeek's rope layout: (re, im) pairs interleaved, de-interleaved before rotate-half
    d = x.shape[-1]
    x = x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).reshape(x.shape)
    return x * cos + _rotate_half(x) * sin


@torch.no_grad()
def run(hidden_states, cos, sin, q_proj, kv_a_proj, kv_a_norm, kv_b_proj):
    t = hidden_states.shape[0]
    heads, nope, rope, vdim, rank = 16, 128, 64, 128, 512
    q = F.linear(hidden_states, q_proj)
    q_nope, q_pe = q.view(t, heads, nope + rope).split([nope, rope], dim=-1)
    c_kv, k_pe = F.linear(hidden_states, kv_a_proj).split([rank, rope], dim=-1)
    c_kv = _rmsnorm(c_kv, kv_a_norm, 1e-06)
    k_nope, value = F.linear(c_kv, kv_b_proj).view(t, heads, nope + vdim).split([nope, vdim], dim=-1)
    cos, sin = cos[:, None], sin[:, None]
    q_pe = _rope_interleaved(q_pe, cos, sin)
    k_pe = _rope_interleaved(k_pe[:, None], cos, sin)
    query = torch.cat((q_nope, q_pe), dim=-1)
    key = torch.cat((k_nope, k_pe.expand(t, heads, rope)), dim=-1)
    return query, key, value.contiguous(), c_kv, k_pe[:, 0]
