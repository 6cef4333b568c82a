import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['skip'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['c'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['two_hidden'],)
    dt = torch.bfloat16
    out['skip_norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['two_hidden'],)
    dt = torch.bfloat16
    out['skip_norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['two_hidden'])
    dt = torch.bfloat16
    out['skip_linear_weight'] = (torch.randn(shape, device=device) * 0.018844459036110227).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['skip_linear_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['mod_weight'] = (torch.randn(shape, device=device) * 0.026650089544451305).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['mod_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['norm1_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['norm1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['qkv_dim'], a['hidden_size'])
    dt = torch.bfloat16
    out['qkv_weight'] = (torch.randn(shape, device=device) * 0.026650089544451305).to(dt)
    shape = (a['qkv_dim'],)
    dt = torch.bfloat16
    out['qkv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['q_norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['q_norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['k_norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['k_norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['out_weight'] = (torch.randn(shape, device=device) * 0.026650089544451305).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['num_tokens'], a['half_head'])
    dt = torch.float32
    out['rope_cos'] = (_hunyuan_table(a, device, 'cos')).to(dt)
    shape = (a['num_tokens'], a['half_head'])
    dt = torch.float32
    out['rope_sin'] = (_hunyuan_table(a, device, 'sin')).to(dt)
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


def _hunyuan_table(a, device, which):
    """get_2d_rotary_pos_embed (use_real) on the grid get_fill_resize_and_crop gives for base size 32 (512 px /
    8 / 2): positions are linspace over the crop of the base grid; the first half of head_dim rotates by the
    column position, the second by the row (the meshgrid order of the original), pairs repeated interleaved."""
    h, w, head_dim = a["height"], a["width"], 88
    base = 32
    if h > w:
        rh, rw = base, int(round(base / h * w))
    else:
        rw, rh = base, int(round(base / w * h))
    top, left = int(round((base - rh) / 2.0)), int(round((base - rw) / 2.0))
    rows = top + torch.arange(h, dtype=torch.float64, device=device) * (rh / h)
    cols = left + torch.arange(w, dtype=torch.float64, device=device) * (rw / w)
    quarter = head_dim // 4
    freqs = 1.0 / (10000 ** (torch.arange(0, head_dim // 2, 2, dtype=torch.float64, device=device)[:quarter]
                             / (head_dim // 2)))
    col_angle = cols[None, :, None].expand(h, w, 1) * freqs
    row_angle = rows[:, None, None].expand(h, w, 1) * freqs
    angle = torch.cat((col_angle, row_angle), dim=-1).reshape(h * w, -1).float()
    return angle.cos() if which == "cos" else angle.sin()


@torch.no_grad()
def run(x, skip, c, skip_norm_weight, skip_norm_bias, skip_linear_weight, skip_linear_bias, mod_weight, mod_bias,
        norm1_weight, norm1_bias, qkv_weight, qkv_bias, q_norm_weight, q_norm_bias, k_norm_weight, k_norm_bias,
        out_weight, out_bias, rope_cos, rope_sin):
    """HunYuanDiTBlock.forward through the self-attention residual, for a block of the second half (skip=True)."""
    b, n, d = x.shape
    heads = 16
    x = F.linear(_layer_norm(torch.cat((x, skip), dim=-1), skip_norm_weight, skip_norm_bias, 1e-06),
                 skip_linear_weight, skip_linear_bias)
    shift = F.linear(F.silu(c), mod_weight, mod_bias)[:, None]
    h = (_layer_norm(x, norm1_weight, norm1_bias, 1e-06) + shift).to(x.dtype)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).view(b, n, 3, heads, -1).permute(2, 0, 3, 1, 4)
    q = _layer_norm(q, q_norm_weight, q_norm_bias, 1e-06)
    k = _layer_norm(k, k_norm_weight, k_norm_bias, 1e-06)
    q, k = _rope_pairs(q, rope_cos, rope_sin), _rope_pairs(k, rope_cos, rope_sin)
    o = _sdpa(q, k, v).transpose(1, 2).reshape(b, n, d)
    return (x + F.linear(o, out_weight, out_bias)).to(x.dtype)
