import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_tokens'])
    dt = torch.float32
    out['t'] = (_ti2v_timesteps(a, device)).to(dt)
    shape = (a['dim'], a['freq_dim'])
    dt = torch.float32
    out['emb1_weight'] = (torch.randn(shape, device=device) * 0.0625).to(dt)
    shape = (a['dim'],)
    dt = torch.float32
    out['emb1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['dim'], a['dim'])
    dt = torch.float32
    out['emb2_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['dim'],)
    dt = torch.float32
    out['emb2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['six_dim'], a['dim'])
    dt = torch.float32
    out['proj_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['six_dim'],)
    dt = torch.float32
    out['proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
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


def _ti2v_timesteps(a, device):
    """TI2V per-token timesteps: the first latent frame (the conditioning image) at 0, the rest at this step's t."""
    b, f, h, w = a["batch_size"], a["frames"], a["height"], a["width"]
    t = (torch.rand(b, 1, device=device) * 1000).expand(b, f * h * w).clone()
    t[:, : h * w] = 0
    return t


@torch.no_grad()
def run(t, emb1_weight, emb1_bias, emb2_weight, emb2_bias, proj_weight, proj_bias):
    """WanModel.forward time embeddings: sinusoidal_embedding_1d(freq_dim, t) in float64 per token, then
    time_embedding (Linear, SiLU, Linear) and time_projection (SiLU, Linear to 6 x dim), in fp32."""
    b, s = t.shape
    half = emb1_weight.shape[1] // 2
    pos = t.to(torch.float64).flatten()
    sinusoid = torch.outer(pos, torch.pow(10000, -torch.arange(half, dtype=torch.float64, device=t.device).div(half)))
    x = torch.cat((torch.cos(sinusoid), torch.sin(sinusoid)), dim=1).to(emb1_weight.dtype)
    e = F.linear(F.silu(F.linear(x, emb1_weight, emb1_bias)), emb2_weight, emb2_bias)
    e0 = F.linear(F.silu(e), proj_weight, proj_bias)
    return e.view(b, s, -1), e0.view(b, s, 6, -1)
