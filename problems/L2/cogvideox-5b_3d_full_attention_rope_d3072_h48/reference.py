import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['text_len'], a['hidden_size'])
    dt = torch.bfloat16
    out['encoder_hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['q_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['q_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['k_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['k_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['v_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['v_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['norm_q_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['norm_q_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['norm_k_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['head_dim'],)
    dt = torch.bfloat16
    out['norm_k_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['out_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['num_tokens'], a['half_head'])
    dt = torch.float32
    out['rope_cos'] = (_cog_table(a, device, 'cos')).to(dt)
    shape = (a['num_tokens'], a['half_head'])
    dt = torch.float32
    out['rope_sin'] = (_cog_table(a, device, 'sin')).to(dt)
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


def _cog_table(a, device, which):
    """get_3d_rotary_pos_embed (use_real) for head_dim 64: 16 dims over frames, 24 over rows, 24 over columns
    (theta 10000), pairs interleaved; positions are the patch indices (the 720x480 grid is the base grid)."""
    t, h, w = a["frames"], a["height"], a["width"]
    parts = []
    for size, dim, axis in ((t, 16, 0), (h, 24, 1), (w, 24, 2)):
        inv = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim))
        ang = torch.arange(size, dtype=torch.float64, device=device)[:, None] * inv[None]
        shape = [1, 1, 1, dim // 2]
        shape[axis] = size
        parts.append(ang.view(shape).expand(t, h, w, dim // 2))
    angle = torch.cat(parts, dim=-1).reshape(t * h * w, -1).float()
    return angle.cos() if which == "cos" else angle.sin()


@torch.no_grad()
def run(hidden_states, encoder_hidden_states, q_weight, q_bias, k_weight, k_bias, v_weight, v_bias, norm_q_weight,
        norm_q_bias, norm_k_weight, norm_k_bias, out_weight, out_bias, rope_cos, rope_sin):
    """CogVideoXAttnProcessor2_0: full 3-D attention over [text, video], q/k LayerNorm, RoPE on video tokens."""
    b, nv, d = hidden_states.shape
    nt = encoder_hidden_states.shape[1]
    heads = 48
    x = torch.cat((encoder_hidden_states, hidden_states), dim=1)

    def split(z):
        return z.view(b, nt + nv, heads, -1).transpose(1, 2)
    q, k, v = (split(F.linear(x, w, bias)) for w, bias in ((q_weight, q_bias), (k_weight, k_bias), (v_weight, v_bias)))
    q = _layer_norm(q, norm_q_weight, norm_q_bias, 1e-06)
    k = _layer_norm(k, norm_k_weight, norm_k_bias, 1e-06)
    q = torch.cat((q[:, :, :nt], _rope_pairs(q[:, :, nt:], rope_cos, rope_sin)), dim=2)
    k = torch.cat((k[:, :, :nt], _rope_pairs(k[:, :, nt:], rope_cos, rope_sin)), dim=2)
    o = F.linear(_sdpa(q, k, v).transpose(1, 2).reshape(b, nt + nv, d), out_weight, out_bias)
    return o[:, nt:], o[:, :nt]
