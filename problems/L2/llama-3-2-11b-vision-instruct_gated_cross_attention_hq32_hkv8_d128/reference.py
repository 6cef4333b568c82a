import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['text_len'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['vision_len'], a['hidden_size'])
    dt = torch.bfloat16
    out['cross_attention_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['input_layernorm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['q_proj'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['kv_dim'], a['hidden_size'])
    dt = torch.bfloat16
    out['k_proj'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['kv_dim'], a['hidden_size'])
    dt = torch.bfloat16
    out['v_proj'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['o_proj'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['q_norm_weight'] = (torch.randn(shape, device=device) * 0.3 + 2.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['k_norm_weight'] = (torch.randn(shape, device=device) * 0.3 + 2.0).to(dt)
    shape = (a['one'],)
    dt = torch.bfloat16
    out['cross_attn_attn_gate'] = (torch.randn(shape, device=device) * 0.5 + 1.0).to(dt)
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
def run(hidden_states, cross_attention_states, input_layernorm_weight, q_proj, k_proj, v_proj, o_proj,
        q_norm_weight, k_norm_weight, cross_attn_attn_gate):
    b, t, d = hidden_states.shape
    heads, kv_heads, hd = 32, 8, 128
    x = _rmsnorm(hidden_states, input_layernorm_weight, 1e-05)
    q = _rmsnorm(F.linear(x, q_proj).view(b, t, heads, hd).transpose(1, 2), q_norm_weight, 1e-05)
    k = F.linear(cross_attention_states, k_proj).view(b, -1, kv_heads, hd).transpose(1, 2)
    k = _rmsnorm(k, k_norm_weight, 1e-05)
    v = F.linear(cross_attention_states, v_proj).view(b, -1, kv_heads, hd).transpose(1, 2)
    k = k.repeat_interleave(heads // kv_heads, dim=1)
    v = v.repeat_interleave(heads // kv_heads, dim=1)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, heads * hd)
    return hidden_states + cross_attn_attn_gate.tanh() * F.linear(o, o_proj)
