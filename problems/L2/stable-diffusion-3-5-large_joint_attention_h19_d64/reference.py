import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['image_tokens'], a['dim'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['text_tokens'], a['dim'])
    dt = torch.bfloat16
    out['encoder_hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['qkv_dim'], a['dim'])
    dt = torch.bfloat16
    out['qkv_weight'] = (torch.randn(shape, device=device) * 0.020277677641345318).to(dt)
    shape = (a['qkv_dim'],)
    dt = torch.bfloat16
    out['qkv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['qkv_dim'], a['dim'])
    dt = torch.bfloat16
    out['add_qkv_weight'] = (torch.randn(shape, device=device) * 0.020277677641345318).to(dt)
    shape = (a['qkv_dim'],)
    dt = torch.bfloat16
    out['add_qkv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['dim'], a['inner_dim'])
    dt = torch.bfloat16
    out['out_weight'] = (torch.randn(shape, device=device) * 0.02867696673382022).to(dt)
    shape = (a['dim'],)
    dt = torch.bfloat16
    out['out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['dim'], a['inner_dim'])
    dt = torch.bfloat16
    out['add_out_weight'] = (torch.randn(shape, device=device) * 0.02867696673382022).to(dt)
    shape = (a['dim'],)
    dt = torch.bfloat16
    out['add_out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['norm_q'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['norm_k'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['norm_added_q'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['norm_added_k'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
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
def run(hidden_states, encoder_hidden_states, qkv_weight, qkv_bias, add_qkv_weight, add_qkv_bias, out_weight, out_bias, add_out_weight, add_out_bias, norm_q, norm_k, norm_added_q, norm_added_k):
    b, n, d = hidden_states.shape
    heads = 19
    hd = 64

    def split(x):
        q, k, v = x.view(x.shape[0], x.shape[1], 3, heads, hd).unbind(2)
        return q, k, v
    q, k, v = split(F.linear(hidden_states, qkv_weight, qkv_bias))
    cq, ck, cv = split(F.linear(encoder_hidden_states, add_qkv_weight, add_qkv_bias))
    q, k = _rmsnorm(q, norm_q, 1e-06), _rmsnorm(k, norm_k, 1e-06)
    cq, ck = _rmsnorm(cq, norm_added_q, 1e-06), _rmsnorm(ck, norm_added_k, 1e-06)
    q = torch.cat((q, cq), dim=1).transpose(1, 2)
    k = torch.cat((k, ck), dim=1).transpose(1, 2)
    v = torch.cat((v, cv), dim=1).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, -1, heads * hd)
    image, text = o[:, :n], o[:, n:]
    return F.linear(image, out_weight, out_bias), F.linear(text, add_out_weight, add_out_bias)
