import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['frames'], a['height'], a['width'], a['dim'])
    dt = torch.float32
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_tokens'], a['three'], a['dim'])
    dt = torch.float32
    out['e'] = (torch.randn(shape, device=device) * 0.3).to(dt)
    shape = (a['three'], a['dim'])
    dt = torch.float32
    out['modulation'] = (torch.randn(shape, device=device) * 0.013975424859373685).to(dt)
    shape = (a['dim'], a['dim'])
    dt = torch.bfloat16
    out['q_weight'] = (torch.randn(shape, device=device) * 0.013975424859373685).to(dt)
    shape = (a['dim'],)
    dt = torch.bfloat16
    out['q_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['dim'], a['dim'])
    dt = torch.bfloat16
    out['k_weight'] = (torch.randn(shape, device=device) * 0.013975424859373685).to(dt)
    shape = (a['dim'],)
    dt = torch.bfloat16
    out['k_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['dim'], a['dim'])
    dt = torch.bfloat16
    out['v_weight'] = (torch.randn(shape, device=device) * 0.013975424859373685).to(dt)
    shape = (a['dim'],)
    dt = torch.bfloat16
    out['v_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['dim'], a['dim'])
    dt = torch.bfloat16
    out['o_weight'] = (torch.randn(shape, device=device) * 0.013975424859373685).to(dt)
    shape = (a['dim'],)
    dt = torch.bfloat16
    out['o_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['dim'],)
    dt = torch.bfloat16
    out['norm_q_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['dim'],)
    dt = torch.bfloat16
    out['norm_k_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
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


def _rope_3d(x, f, hh, ww):
    # Wan rope_apply: head_dim/2 complex pairs split (c - 2*(c//3), c//3, c//3) over (frame, height, width)
    b, s, n, d = x.shape
    c = d // 2
    acc = _acc(x)
    parts = (c - 2 * (c // 3), c // 3, c // 3)
    angles = []
    for size, count, axis in ((f, parts[0], 0), (hh, parts[1], 1), (ww, parts[2], 2)):
        dim = 2 * count
        inv = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, device=x.device, dtype=acc) / dim))
        pos = torch.arange(size, device=x.device, dtype=acc)[:, None] * inv[None]
        shape = [1, 1, 1, count]
        shape[axis] = size
        angles.append(pos.view(shape).expand(f, hh, ww, count))
    angle = torch.cat(angles, dim=-1).reshape(s, 1, c)
    cos, sin = angle.cos(), angle.sin()
    xr = x.to(acc).unflatten(-1, (c, 2))
    re, im = xr[..., 0], xr[..., 1]
    out = torch.stack((re * cos - im * sin, re * sin + im * cos), dim=-1)
    return out.flatten(-2).to(x.dtype)


@torch.no_grad()
def run(x, e, modulation, q_weight, q_bias, k_weight, k_bias, v_weight, v_bias, o_weight, o_bias, norm_q_weight,
        norm_k_weight):
    """WanAttentionBlock.forward, self-attention residual: e = modulation + e0 (per token, fp32);
    y = self_attn(norm1(x) * (1 + e[1]) + e[0]); x = x + y * e[2] in fp32."""
    b, f, hh, ww, d = x.shape
    s = f * hh * ww
    heads = 40
    lowp = q_weight.dtype
    acc = _acc(x)
    x = x.reshape(b, s, d)
    mod = modulation.to(acc)[None, None] + e.to(acc)                 # [b, s, 3, d]
    h = (_layer_norm(x, None, None, 1e-06).to(acc) * (1 + mod[:, :, 1]) + mod[:, :, 0]).to(lowp)
    q = _rmsnorm(F.linear(h, q_weight, q_bias), norm_q_weight, 1e-06).view(b, s, heads, -1)
    k = _rmsnorm(F.linear(h, k_weight, k_bias), norm_k_weight, 1e-06).view(b, s, heads, -1)
    v = F.linear(h, v_weight, v_bias).view(b, s, heads, -1)
    q, k = _rope_3d(q, f, hh, ww), _rope_3d(k, f, hh, ww)
    o = _sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2).reshape(b, s, d)
    y = F.linear(o, o_weight, o_bias)
    return (x.to(acc) + y.to(acc) * mod[:, :, 2]).to(x.dtype).view(b, f, hh, ww, d)
