import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_heads'], a['nope_dim'])
    dt = torch.bfloat16
    out['q_nope'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['rope_dim'])
    dt = torch.bfloat16
    out['q_pe'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['context_len'], a['kv_lora_rank'])
    dt = torch.bfloat16
    out['ckv_cache'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['context_len'], a['rope_dim'])
    dt = torch.bfloat16
    out['kpe_cache'] = (torch.randn(shape, device=device) * 1.0).to(dt)
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
def run(q_nope, q_pe, ckv_cache, kpe_cache, kv_b_proj):
    heads = q_nope.shape[1]
    w = kv_b_proj.view(heads, 128 + 128, 512)
    w_uk, w_uv = w[:, :128].float(), w[:, 128:].float()
    q_latent = torch.einsum("bhn,hnr->bhr", q_nope.float(), w_uk)
    ckv, kpe = ckv_cache.float(), kpe_cache.float()
    scores = torch.einsum("bhr,btr->bht", q_latent, ckv) + torch.einsum("bhp,btp->bht", q_pe.float(), kpe)
    probs = (scores * 0.1147213867929261).softmax(dim=-1)
    o_latent = torch.einsum("bht,btr->bhr", probs, ckv)
    return torch.einsum("bhr,hvr->bhv", o_latent, w_uv).to(q_nope.dtype).flatten(1)
