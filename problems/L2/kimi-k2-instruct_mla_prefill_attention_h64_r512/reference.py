import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['seq_len'], a['num_heads'], a['q_head_dim'])
    dt = torch.bfloat16
    out['query'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['kv_lora_rank'])
    dt = torch.bfloat16
    out['compressed_kv'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['rope_dim'])
    dt = torch.bfloat16
    out['k_pe'] = (torch.randn(shape, device=device) * 1.0).to(dt)
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


@torch.no_grad()
def run(query, compressed_kv, k_pe, kv_b_proj):
    b, s, heads, _ = query.shape
    k_nope, value = F.linear(compressed_kv, kv_b_proj).view(b, s, heads, 128 + 128).split([128, 128], -1)
    key = torch.cat((k_nope, k_pe[:, :, None].expand(b, s, heads, 64)), dim=-1)
    o = F.scaled_dot_product_attention(query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2),
                                       is_causal=True, scale=0.13086079996295005)
    return o.transpose(1, 2).reshape(b, s, heads * 128)
