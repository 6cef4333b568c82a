import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['channels'], a['height'], a['width'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['context_len'], a['context_dim'])
    dt = torch.bfloat16
    out['context'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['channels'])
    dt = torch.bfloat16
    out['proj_in_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['proj_in_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['depth'], a['channels'])
    dt = torch.bfloat16
    out['norm1_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['depth'], a['channels'])
    dt = torch.bfloat16
    out['norm1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['depth'], a['three_channels'], a['channels'])
    dt = torch.bfloat16
    out['attn1_qkv_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['depth'], a['channels'], a['channels'])
    dt = torch.bfloat16
    out['attn1_out_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['depth'], a['channels'])
    dt = torch.bfloat16
    out['attn1_out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['depth'], a['channels'])
    dt = torch.bfloat16
    out['norm2_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['depth'], a['channels'])
    dt = torch.bfloat16
    out['norm2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['depth'], a['channels'], a['channels'])
    dt = torch.bfloat16
    out['attn2_q_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['depth'], a['two_channels'], a['context_dim'])
    dt = torch.bfloat16
    out['attn2_kv_weight'] = (torch.randn(shape, device=device) * 0.03125).to(dt)
    shape = (a['depth'], a['channels'], a['channels'])
    dt = torch.bfloat16
    out['attn2_out_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['depth'], a['channels'])
    dt = torch.bfloat16
    out['attn2_out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['depth'], a['channels'])
    dt = torch.bfloat16
    out['norm3_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['depth'], a['channels'])
    dt = torch.bfloat16
    out['norm3_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['depth'], a['eight_channels'], a['channels'])
    dt = torch.bfloat16
    out['ff_proj_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['depth'], a['eight_channels'])
    dt = torch.bfloat16
    out['ff_proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['depth'], a['channels'], a['four_channels'])
    dt = torch.bfloat16
    out['ff_out_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['depth'], a['channels'])
    dt = torch.bfloat16
    out['ff_out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'], a['channels'])
    dt = torch.bfloat16
    out['proj_out_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['channels'],)
    dt = torch.bfloat16
    out['proj_out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
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
def run(x, context, norm_weight, norm_bias, proj_in_weight, proj_in_bias, norm1_weight, norm1_bias, attn1_qkv_weight,
        attn1_out_weight, attn1_out_bias, norm2_weight, norm2_bias, attn2_q_weight, attn2_kv_weight, attn2_out_weight,
        attn2_out_bias, norm3_weight, norm3_bias, ff_proj_weight, ff_proj_bias, ff_out_weight, ff_out_bias,
        proj_out_weight, proj_out_bias):
    """sgm SpatialTransformer (use_linear) with transformer_depth BasicTransformerBlocks: GroupNorm(32, eps 1e-6),
    proj_in, [x + attn1(norm1 x); x + attn2(norm2 x, context); x + GEGLU FF(norm3 x)] per block, proj_out, + x."""
    b, c, hh, ww = x.shape
    heads = c // 64
    acc, lowp = _acc(x), proj_in_weight.dtype  # the residual stream in fp32, GEMM and attention inputs in bf16
    h = F.group_norm(x.to(acc), 32, norm_weight.to(acc), norm_bias.to(acc), 1e-06).to(lowp)
    h = F.linear(h.flatten(2).transpose(1, 2), proj_in_weight, proj_in_bias).to(acc)
    n = h.shape[1]

    def heads_of(z):
        return z.view(b, -1, heads, 64).transpose(1, 2)

    def attend(q, k, v):
        return _sdpa(heads_of(q), heads_of(k), heads_of(v)).transpose(1, 2).reshape(b, n, c)

    def norm(z, weight, bias):
        return _layer_norm(z, weight, bias, 1e-05).to(lowp)

    for i in range(attn1_qkv_weight.shape[0]):
        q, k, v = F.linear(norm(h, norm1_weight[i], norm1_bias[i]), attn1_qkv_weight[i]).chunk(3, dim=-1)
        h = h + F.linear(attend(q, k, v), attn1_out_weight[i], attn1_out_bias[i]).to(acc)
        k, v = F.linear(context, attn2_kv_weight[i]).chunk(2, dim=-1)
        q = F.linear(norm(h, norm2_weight[i], norm2_bias[i]), attn2_q_weight[i])
        h = h + F.linear(attend(q, k, v), attn2_out_weight[i], attn2_out_bias[i]).to(acc)
        p, gate = F.linear(norm(h, norm3_weight[i], norm3_bias[i]), ff_proj_weight[i], ff_proj_bias[i]).chunk(2, dim=-1)
        h = h + F.linear(p * F.gelu(gate), ff_out_weight[i], ff_out_bias[i]).to(acc)
    h = F.linear(h.to(lowp), proj_out_weight, proj_out_bias).transpose(1, 2).reshape(b, c, hh, ww)
    return (h.to(acc) + x.to(acc)).to(x.dtype)
