import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_tokens'], a['dim_x'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['text_len'], a['dim_y'])
    dt = torch.bfloat16
    out['y'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['dim_x'])
    dt = torch.bfloat16
    out['scale_x'] = (torch.randn(shape, device=device) * 0.3).to(dt)
    shape = (a['batch_size'], a['dim_y'])
    dt = torch.bfloat16
    out['scale_y'] = (torch.randn(shape, device=device) * 0.3).to(dt)
    shape = (a['qkv_dim'], a['dim_x'])
    dt = torch.bfloat16
    out['qkv_x_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['qkv_dim'], a['dim_y'])
    dt = torch.bfloat16
    out['qkv_y_weight'] = (torch.randn(shape, device=device) * 0.02551551815399144).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['q_norm_x_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['k_norm_x_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['q_norm_y_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['k_norm_y_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['dim_x'], a['dim_x'])
    dt = torch.bfloat16
    out['proj_x_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['dim_x'],)
    dt = torch.bfloat16
    out['proj_x_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['dim_y'], a['dim_x'])
    dt = torch.bfloat16
    out['proj_y_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['dim_y'],)
    dt = torch.bfloat16
    out['proj_y_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['num_tokens'], a['num_heads'], a['half_head'])
    dt = torch.float32
    out['rope_cos'] = (_mochi_table(a, device, 'cos')).to(dt)
    shape = (a['num_tokens'], a['num_heads'], a['half_head'])
    dt = torch.float32
    out['rope_sin'] = (_mochi_table(a, device, 'sin')).to(dt)
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


def _mochi_table(a, device, which):
    """create_position_matrix (positions interpolated to target_area 36864) x per-head frequencies, as
    compute_mixed_rotation gives rope_cos / rope_sin [N, heads, head_dim / 2]; the learned pos_frequencies
    are stood in for by theta-spaced ones (rope_theta 10000) scaled per head."""
    t, h, w, heads, half = a["frames"], a["height"], a["width"], 24, 64
    scale = math.sqrt(36864 / (h * w))

    def centers(stop, num):
        edges = torch.linspace(0, stop, num + 1, dtype=torch.float32, device=device)
        return (edges[:-1] + edges[1:]) / 2
    grid = torch.meshgrid(torch.arange(t, dtype=torch.float32, device=device), centers(h * scale, h),
                          centers(w * scale, w), indexing="ij")
    pos = torch.stack(grid, dim=-1).reshape(-1, 3)
    base = 1.0 / (10000.0 ** (torch.arange(half, dtype=torch.float32, device=device) / half))
    per_head = 1.0 + torch.arange(heads, dtype=torch.float32, device=device)[:, None] / heads
    freqs = torch.stack([base * per_head, 0.5 * base * per_head, 0.5 * base * per_head])  # [3, heads, half]
    angle = torch.einsum("nd,dhf->nhf", pos, freqs)
    return angle.cos() if which == "cos" else angle.sin()


@torch.no_grad()
def run(x, y, scale_x, scale_y, qkv_x_weight, qkv_y_weight, q_norm_x_weight, k_norm_x_weight, q_norm_y_weight,
        k_norm_y_weight, proj_x_weight, proj_x_bias, proj_y_weight, proj_y_bias, rope_cos, rope_sin):
    """AsymmetricAttention.forward (prepare_qkv, run_attention) for one block, all text tokens valid."""
    b, n, _ = x.shape
    l = y.shape[1]
    heads = 24
    acc = _acc(x)

    def modulated_rmsnorm(z, scale):
        zf = z.to(acc)
        return (zf * torch.rsqrt(zf.pow(2).mean(-1, keepdim=True) + 1e-06) * (1 + scale.to(acc)[:, None])).to(z.dtype)

    def head_rmsnorm(z, weight):  # layers.RMSNorm(head_dim), eps 1e-5, fp32
        zf = z.to(acc)
        return (zf * torch.rsqrt(zf.pow(2).mean(-1, keepdim=True) + 1e-05) * weight.to(acc)).to(z.dtype)
    qx, kx, vx = F.linear(modulated_rmsnorm(x, scale_x), qkv_x_weight).view(b, n, 3, heads, -1).unbind(2)
    qy, ky, vy = F.linear(modulated_rmsnorm(y, scale_y), qkv_y_weight).view(b, l, 3, heads, -1).unbind(2)
    qx = _rope_pairs(head_rmsnorm(qx, q_norm_x_weight), rope_cos, rope_sin)
    kx = _rope_pairs(head_rmsnorm(kx, k_norm_x_weight), rope_cos, rope_sin)
    qy, ky = head_rmsnorm(qy, q_norm_y_weight), head_rmsnorm(ky, k_norm_y_weight)
    q, k, v = (torch.cat(pair, dim=1).transpose(1, 2) for pair in ((qx, qy), (kx, ky), (vx, vy)))
    o = _sdpa(q, k, v).transpose(1, 2).flatten(2)
    return F.linear(o[:, :n], proj_x_weight, proj_x_bias), F.linear(o[:, n:], proj_y_weight, proj_y_bias)
