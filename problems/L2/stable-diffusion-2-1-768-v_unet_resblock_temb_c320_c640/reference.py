import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['in_channels'], a['height'], a['width'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['time_embed_dim'])
    dt = torch.bfloat16
    out['emb'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['in_channels'],)
    dt = torch.bfloat16
    out['in_norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['in_channels'],)
    dt = torch.bfloat16
    out['in_norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_channels'], a['in_channels'], a['three'], a['three'])
    dt = torch.bfloat16
    out['in_conv_weight'] = (torch.randn(shape, device=device) * 0.018633899812498248).to(dt)
    shape = (a['out_channels'],)
    dt = torch.bfloat16
    out['in_conv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_channels'], a['time_embed_dim'])
    dt = torch.bfloat16
    out['emb_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['out_channels'],)
    dt = torch.bfloat16
    out['emb_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_channels'],)
    dt = torch.bfloat16
    out['out_norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['out_channels'],)
    dt = torch.bfloat16
    out['out_norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_channels'], a['out_channels'], a['three'], a['three'])
    dt = torch.bfloat16
    out['out_conv_weight'] = (torch.randn(shape, device=device) * 0.013176156917368247).to(dt)
    shape = (a['out_channels'],)
    dt = torch.bfloat16
    out['out_conv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['out_channels'], a['in_channels'], a['one'], a['one'])
    dt = torch.bfloat16
    out['skip_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['out_channels'],)
    dt = torch.bfloat16
    out['skip_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
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
def run(x, emb, in_norm_weight, in_norm_bias, in_conv_weight, in_conv_bias, emb_weight, emb_bias, out_norm_weight,
        out_norm_bias, out_conv_weight, out_conv_bias, skip_weight, skip_bias):
    """sgm openaimodel ResBlock (use_scale_shift_norm False): GroupNorm32 (fp32, eps 1e-5) + SiLU + conv3x3,
    + Linear(SiLU(emb)) per channel, GroupNorm32 + SiLU + conv3x3, + 1x1 skip conv (channels change)."""
    acc = _acc(x)

    def gn_silu(z, weight, bias):
        return F.silu(F.group_norm(z.to(acc), 32, weight.to(acc), bias.to(acc), 1e-05).to(z.dtype))
    h = F.conv2d(gn_silu(x, in_norm_weight, in_norm_bias), in_conv_weight, in_conv_bias, padding=1)
    h = h + F.linear(F.silu(emb), emb_weight, emb_bias)[:, :, None, None]
    h = F.conv2d(gn_silu(h, out_norm_weight, out_norm_bias), out_conv_weight, out_conv_bias, padding=1)
    return (F.conv2d(x, skip_weight, skip_bias) + h).to(x.dtype)
