import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_frames'], a['channels'], a['height'], a['width'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_frames'], a['time_embed_dim'])
    dt = torch.bfloat16
    out['emb'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['frames'])
    dt = torch.float32
    out['image_only_indicator'] = ((torch.rand(shape, device=device) < 0.1)).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['s_in_norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['s_in_norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['channels'], a['three'], a['three'])
    dt = torch.bfloat16
    out['s_in_conv_weight'] = (torch.randn(shape, device=device) * 0.018633899812498248).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['s_in_conv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['time_embed_dim'])
    dt = torch.bfloat16
    out['s_emb_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['s_emb_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['s_out_norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['s_out_norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['channels'], a['three'], a['three'])
    dt = torch.bfloat16
    out['s_out_conv_weight'] = (torch.randn(shape, device=device) * 0.018633899812498248).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['s_out_conv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['t_in_norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['t_in_norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['channels'], a['kt'], a['one'], a['one'])
    dt = torch.bfloat16
    out['t_in_conv_weight'] = (torch.randn(shape, device=device) * 0.032274861218395144).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['t_in_conv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['time_embed_dim'])
    dt = torch.bfloat16
    out['t_emb_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['t_emb_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['t_out_norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['t_out_norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['channels'], a['kt'], a['one'], a['one'])
    dt = torch.bfloat16
    out['t_out_conv_weight'] = (torch.randn(shape, device=device) * 0.032274861218395144).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['t_out_conv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['one'],)
    dt = torch.float32
    out['mix_factor'] = (torch.randn(shape, device=device) * 1.5).to(dt)
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


def _alpha(image_only_indicator, mix_factor, ref):
    """AlphaBlender.get_alpha, merge_strategy learned_with_images: 1 for image-only frames, else sigmoid(mix)."""
    acc = _acc(ref)
    learned = torch.sigmoid(mix_factor.to(acc)).reshape(())
    return torch.where(image_only_indicator.bool(), torch.ones((), dtype=acc, device=ref.device), learned)


@torch.no_grad()
def run(x, emb, image_only_indicator, s_in_norm_weight, s_in_norm_bias, s_in_conv_weight, s_in_conv_bias, s_emb_weight,
        s_emb_bias, s_out_norm_weight, s_out_norm_bias, s_out_conv_weight, s_out_conv_bias, t_in_norm_weight,
        t_in_norm_bias, t_in_conv_weight, t_in_conv_bias, t_emb_weight, t_emb_bias, t_out_norm_weight, t_out_norm_bias,
        t_out_conv_weight, t_out_conv_bias, mix_factor):
    """sgm VideoResBlock: the spatial ResBlock per frame, the temporal ResBlock (dims 3, kernel (3, 1, 1),
    exchange_temb_dims) over the clip, and AlphaBlender (learned_with_images, pattern b t -> b 1 t 1 1)."""
    b, t = image_only_indicator.shape
    acc = _acc(x)

    def gn_silu(z, weight, bias):
        return F.silu(F.group_norm(z.to(acc), 32, weight.to(acc), bias.to(acc), 1e-05).to(z.dtype))
    e = F.silu(emb)
    h = F.conv2d(gn_silu(x, s_in_norm_weight, s_in_norm_bias), s_in_conv_weight, s_in_conv_bias, padding=1)
    h = h + F.linear(e, s_emb_weight, s_emb_bias)[:, :, None, None]
    h = F.conv2d(gn_silu(h, s_out_norm_weight, s_out_norm_bias), s_out_conv_weight, s_out_conv_bias, padding=1)
    xs = x + h
    c, hh, ww = xs.shape[1:]
    x5 = xs.view(b, t, c, hh, ww).permute(0, 2, 1, 3, 4)                                   # b c t h w
    h = F.conv3d(gn_silu(x5, t_in_norm_weight, t_in_norm_bias), t_in_conv_weight, t_in_conv_bias, padding=(1, 0, 0))
    h = h + F.linear(e, t_emb_weight, t_emb_bias).view(b, t, c).permute(0, 2, 1)[..., None, None]
    h = F.conv3d(gn_silu(h, t_out_norm_weight, t_out_norm_bias), t_out_conv_weight, t_out_conv_bias, padding=(1, 0, 0))
    alpha = _alpha(image_only_indicator, mix_factor, x)[:, None, :, None, None]
    out = alpha * x5.to(acc) + (1.0 - alpha) * (x5 + h).to(acc)
    return out.to(x.dtype).permute(0, 2, 1, 3, 4).reshape(b * t, c, hh, ww)
