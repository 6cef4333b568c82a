import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['img_len'], a['hidden_size'])
    dt = torch.bfloat16
    out['img'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['txt_len'], a['hidden_size'])
    dt = torch.bfloat16
    out['txt'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['three'], a['hidden_size'])
    dt = torch.bfloat16
    out['img_mod'] = (torch.randn(shape, device=device) * 0.3).to(dt)
    shape = (a['batch_size'], a['three'], a['hidden_size'])
    dt = torch.bfloat16
    out['txt_mod'] = (torch.randn(shape, device=device) * 0.3).to(dt)
    shape = (a['qkv_dim'], a['hidden_size'])
    dt = torch.bfloat16
    out['img_qkv_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['qkv_dim'],)
    dt = torch.bfloat16
    out['img_qkv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['img_q_scale'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['img_k_scale'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['img_proj_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['img_proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['qkv_dim'], a['hidden_size'])
    dt = torch.bfloat16
    out['txt_qkv_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['qkv_dim'],)
    dt = torch.bfloat16
    out['txt_qkv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['txt_q_scale'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['txt_k_scale'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['txt_proj_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['txt_proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['seq_len'], a['half_head'])
    dt = torch.float32
    out['pe_cos'] = (_flux_table(a, device, 'cos')).to(dt)
    shape = (a['seq_len'], a['half_head'])
    dt = torch.float32
    out['pe_sin'] = (_flux_table(a, device, 'sin')).to(dt)
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


def _stream_qkv(x, mod, qkv_weight, qkv_bias, q_scale, k_scale, heads):
    """LayerNorm (no affine, eps 1e-6), (1 + scale) * x + shift, qkv, QKNorm (RMSNorm with scale, eps 1e-6)."""
    b, n, d = x.shape
    h = _layer_norm(x, None, None, 1e-06)
    h = ((1 + mod[:, 1, None]) * h + mod[:, 0, None]).to(x.dtype)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).view(b, n, 3, heads, -1).permute(2, 0, 3, 1, 4)
    return _rmsnorm(q, q_scale, 1e-06), _rmsnorm(k, k_scale, 1e-06), v


@torch.no_grad()
def run(img, txt, img_mod, txt_mod, img_qkv_weight, img_qkv_bias, img_q_scale, img_k_scale, img_proj_weight,
        img_proj_bias, txt_qkv_weight, txt_qkv_bias, txt_q_scale, txt_k_scale, txt_proj_weight, txt_proj_bias,
        pe_cos, pe_sin):
    """DoubleStreamBlock.forward up to the attention residuals; mod rows are (shift, scale, gate)."""
    heads = 24
    iq, ik, iv = _stream_qkv(img, img_mod, img_qkv_weight, img_qkv_bias, img_q_scale, img_k_scale, heads)
    tq, tk, tv = _stream_qkv(txt, txt_mod, txt_qkv_weight, txt_qkv_bias, txt_q_scale, txt_k_scale, heads)
    q, k, v = torch.cat((tq, iq), dim=2), torch.cat((tk, ik), dim=2), torch.cat((tv, iv), dim=2)
    q, k = _rope_pairs(q, pe_cos, pe_sin), _rope_pairs(k, pe_cos, pe_sin)
    o = _sdpa(q, k, v).transpose(1, 2).flatten(2)
    n_txt = txt.shape[1]
    txt_attn, img_attn = o[:, :n_txt], o[:, n_txt:]
    img_out = img + img_mod[:, 2, None] * F.linear(img_attn, img_proj_weight, img_proj_bias)
    txt_out = txt + txt_mod[:, 2, None] * F.linear(txt_attn, txt_proj_weight, txt_proj_bias)
    return img_out.to(img.dtype), txt_out.to(txt.dtype)
