import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['height'], a['width'], a['hidden_size'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['six_hidden'])
    dt = torch.bfloat16
    out['t'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['six'], a['hidden_size'])
    dt = torch.bfloat16
    out['scale_shift_table'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['two_hidden'], a['hidden_size'], a['one'], a['one'])
    dt = torch.bfloat16
    out['inverted_weight'] = (torch.randn(shape, device=device) * 0.021128856368212913).to(dt)
    shape = (a['two_hidden'],)
    dt = torch.bfloat16
    out['inverted_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['two_hidden'], a['one'], a['three'], a['three'])
    dt = torch.bfloat16
    out['depth_weight'] = (torch.randn(shape, device=device) * 0.3333333333333333).to(dt)
    shape = (a['two_hidden'],)
    dt = torch.bfloat16
    out['depth_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['mlp_hidden'], a['one'], a['one'])
    dt = torch.bfloat16
    out['point_weight'] = (torch.randn(shape, device=device) * 0.01336306209562122).to(dt)
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
def run(x, t, scale_shift_table, inverted_weight, inverted_bias, depth_weight, depth_bias, point_weight):
    """x + gate_mlp * GLUMBConv(t2i_modulate(norm2(x), shift_mlp, scale_mlp)) (SanaMSBlock.forward, last residual)."""
    b, hh, ww, d = x.shape
    mod = scale_shift_table[None] + t.view(b, 6, d)
    h = _layer_norm(x, None, None, 1e-06)
    h = (h * (1 + mod[:, 4, None, None]) + mod[:, 3, None, None]).to(x.dtype).permute(0, 3, 1, 2)
    h = F.silu(F.conv2d(h, inverted_weight, inverted_bias))                       # 1x1, act silu
    h = F.conv2d(h, depth_weight, depth_bias, padding=1, groups=h.shape[1])      # 3x3 depthwise, no act
    h, gate = h.chunk(2, dim=1)
    h = F.conv2d(h * F.silu(gate), point_weight)                                 # 1x1, no bias, no act
    return (x + mod[:, 5, None, None] * h.permute(0, 2, 3, 1)).to(x.dtype)
