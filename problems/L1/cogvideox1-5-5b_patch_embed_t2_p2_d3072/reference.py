import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['latent_frames'], a['channels'], a['latent_height'], a['latent_width'])
    dt = torch.bfloat16
    out['latents'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['text_len'], a['text_dim'])
    dt = torch.bfloat16
    out['text_embeds'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'], a['text_dim'])
    dt = torch.bfloat16
    out['text_proj_weight'] = (torch.randn(shape, device=device) * 0.015625).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['text_proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['patch_dim'])
    dt = torch.bfloat16
    out['proj_weight'] = (torch.randn(shape, device=device) * 0.08838834764831845).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
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




def _layer_norm(x, weight, bias, eps):
    """LayerNorm in the working precision (fp32, or fp64 in the golden run), back to x's dtype."""
    xf = x.to(_acc(x))
    out = F.layer_norm(xf, (x.shape[-1],), None if weight is None else weight.to(xf.dtype),
                       None if bias is None else bias.to(xf.dtype), eps)
    return out.to(x.dtype)


def _rope_pairs(x, cos, sin):
    """Rotate interleaved pairs (x0, x1) of the last dim by angles with cos/sin [..., d/2] (fp32 math)."""
    acc = _acc(x)
    xf = x.to(acc).unflatten(-1, (-1, 2))
    x0, x1 = xf[..., 0], xf[..., 1]
    cos, sin = cos.to(acc), sin.to(acc)
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2).to(x.dtype)


def _sdpa(q, k, v):
    """Bidirectional attention over [b, heads, len, head_dim]."""
    return F.scaled_dot_product_attention(q, k, v)


@torch.no_grad()
def run(latents, text_embeds, text_proj_weight, text_proj_bias, proj_weight, proj_bias):
    """CogVideoXPatchEmbed with patch_size_t: text_proj(text) ++ proj(patchify(latents)) (no positional table)."""
    b, f, c, hh, ww = latents.shape
    p, pt = 2, 2
    x = latents.permute(0, 1, 3, 4, 2).reshape(b, f // pt, pt, hh // p, p, ww // p, p, c)
    x = x.permute(0, 1, 3, 5, 7, 2, 4, 6).flatten(4, 7).flatten(1, 3)
    return torch.cat((F.linear(text_embeds, text_proj_weight, text_proj_bias), F.linear(x, proj_weight, proj_bias)), dim=1)
