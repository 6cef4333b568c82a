import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_heads'], a['seq_len'], a['head_dim'])
    dt = torch.bfloat16
    out['q'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['seq_len'], a['head_dim'])
    dt = torch.bfloat16
    out['k'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['three'])
    dt = torch.float32
    out['ids'] = (_flux_ids(a, device)[None].expand(a['batch_size'], -1, -1).contiguous()).to(dt)
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


def _flux_ids(a, device):
    """BFL sampling.prepare: text ids are zeros, image ids (0, row, column) of the 2x2-patch grid."""
    rows = torch.arange(a["height"], device=device, dtype=torch.float32)
    cols = torch.arange(a["width"], device=device, dtype=torch.float32)
    grid = torch.stack(torch.meshgrid(torch.zeros(1, device=device), rows, cols, indexing="ij"), dim=-1)
    txt = torch.zeros(a["txt_len"], 3, device=device)
    return torch.cat((txt, grid.reshape(-1, 3)), dim=0)


def _flux_angles(ids, axes_dim, theta):
    """EmbedND: per axis, positions x theta^(-2i/d) (rope() in float64 in BFL; here the working precision)."""
    parts = []
    for axis, dim in enumerate(axes_dim):
        acc = torch.float64 if ids.dtype == torch.float64 else torch.float32
        scale = torch.arange(0, dim, 2, dtype=acc, device=ids.device) / dim
        parts.append(ids[..., axis].to(acc)[..., None] * (1.0 / theta ** scale))
    return torch.cat(parts, dim=-1)


def _flux_table(a, device, which):
    angle = _flux_angles(_flux_ids(a, device), [16, 56, 56], 10000.0)
    return angle.cos() if which == "cos" else angle.sin()


@torch.no_grad()
def run(q, k, ids):
    """EmbedND(ids) then apply_rope on q and k: pairs (x[2i], x[2i+1]) rotate by the concatenated angles of the
    three axes ([16, 56, 56] dims -> 8 + 28 + 28 pairs of the head_dim 128)."""
    angle = _flux_angles(ids, [16, 56, 56], 10000.0)[:, None]  # [b, 1, len, 64]
    return _rope_pairs(q, angle.cos(), angle.sin()), _rope_pairs(k, angle.cos(), angle.sin())
