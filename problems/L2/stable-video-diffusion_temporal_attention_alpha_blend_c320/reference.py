import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['frames'], a['tokens'], a['channels'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['context_len'], a['context_dim'])
    dt = torch.bfloat16
    out['image_emb'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['frames'])
    dt = torch.float32
    out['image_only_indicator'] = ((torch.rand(shape, device=device) < 0.25)).to(dt)
    shape = (a['four_channels'], a['channels'])
    dt = torch.bfloat16
    out['pos_in_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['four_channels'],)
    dt = torch.bfloat16
    out['pos_in_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['four_channels'])
    dt = torch.bfloat16
    out['pos_out_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['pos_out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['norm_in_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['norm_in_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['eight_channels'], a['channels'])
    dt = torch.bfloat16
    out['ff_in_proj_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['eight_channels'],)
    dt = torch.bfloat16
    out['ff_in_proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['four_channels'])
    dt = torch.bfloat16
    out['ff_in_out_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['ff_in_out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['norm1_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['norm1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['three_channels'], a['channels'])
    dt = torch.bfloat16
    out['attn1_qkv_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['channels'], a['channels'])
    dt = torch.bfloat16
    out['attn1_out_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['attn1_out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['context_dim'])
    dt = torch.bfloat16
    out['attn2_v_weight'] = (torch.randn(shape, device=device) * 0.03125).to(dt)
    shape = (a['channels'], a['channels'])
    dt = torch.bfloat16
    out['attn2_out_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['attn2_out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['norm3_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['norm3_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['eight_channels'], a['channels'])
    dt = torch.bfloat16
    out['ff_proj_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['eight_channels'],)
    dt = torch.bfloat16
    out['ff_proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['four_channels'])
    dt = torch.bfloat16
    out['ff_out_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['ff_out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['one'],)
    dt = torch.float32
    out['mix_factor'] = (torch.randn(shape, device=device) * 1.0).to(dt)
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


def _geglu_ff(z, proj_weight, proj_bias, out_weight, out_bias):
    p, gate = F.linear(z, proj_weight, proj_bias).chunk(2, dim=-1)
    return F.linear(p * F.gelu(gate), out_weight, out_bias)


@torch.no_grad()
def run(x, image_emb, image_only_indicator, pos_in_weight, pos_in_bias, pos_out_weight, pos_out_bias, norm_in_weight,
        norm_in_bias, ff_in_proj_weight, ff_in_proj_bias, ff_in_out_weight, ff_in_out_bias, norm1_weight, norm1_bias,
        attn1_qkv_weight, attn1_out_weight, attn1_out_bias, attn2_v_weight, attn2_out_weight, attn2_out_bias,
        norm3_weight, norm3_bias, ff_proj_weight, ff_proj_bias, ff_out_weight, ff_out_bias, mix_factor):
    """SpatialVideoTransformer's temporal half for one block: x_mix = x + time_pos_embed(frame index);
    VideoTransformerBlock over the frames of each spatial position; AlphaBlender(x, x_mix)."""
    b, t, s, c = x.shape
    acc = _acc(x)
    heads, ch = c // 64, 64
    half = c // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=acc, device=x.device) / half)
    args = torch.arange(t, dtype=acc, device=x.device)[:, None] * freqs[None]
    t_emb = torch.cat((torch.cos(args), torch.sin(args)), dim=-1).to(x.dtype)
    emb = F.linear(F.silu(F.linear(t_emb, pos_in_weight, pos_in_bias)), pos_out_weight, pos_out_bias)
    h = (x + emb[None, :, None]).permute(0, 2, 1, 3).reshape(b * s, t, c)      # (b s) t c

    def heads_of(z):
        return z.reshape(z.shape[0], -1, heads, ch).transpose(1, 2)

    h = h + _geglu_ff(_layer_norm(h, norm_in_weight, norm_in_bias, 1e-05), ff_in_proj_weight, ff_in_proj_bias,
                      ff_in_out_weight, ff_in_out_bias)
    q, k, v = F.linear(_layer_norm(h, norm1_weight, norm1_bias, 1e-05), attn1_qkv_weight).chunk(3, dim=-1)
    o = _sdpa(heads_of(q), heads_of(k), heads_of(v)).transpose(1, 2).reshape(b * s, t, c)
    h = h + F.linear(o, attn1_out_weight, attn1_out_bias)
    # temporal cross-attention to the first frame's context: one token (the CLIP image embedding), so the
    # softmax is 1 and attn2(norm2(h), ctx) = to_out(to_v(ctx)) for every position and frame of the video
    cross = F.linear(F.linear(image_emb[:, 0], attn2_v_weight), attn2_out_weight, attn2_out_bias)  # [b, c]
    h = h + cross.repeat_interleave(s, dim=0)[:, None]
    h = h + _geglu_ff(_layer_norm(h, norm3_weight, norm3_bias, 1e-05), ff_proj_weight, ff_proj_bias, ff_out_weight,
                      ff_out_bias)
    x_mix = h.reshape(b, s, t, c).permute(0, 2, 1, 3)
    alpha = _alpha(image_only_indicator, mix_factor, x)[:, :, None, None]
    return (alpha * x.to(acc) + (1.0 - alpha) * x_mix.to(acc)).to(x.dtype)
