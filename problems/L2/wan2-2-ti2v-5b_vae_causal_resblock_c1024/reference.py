import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['channels'], a['chunk_frames'], a['height'], a['width'])
    dt = torch.float32
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['channels'], a['two'], a['height'], a['width'])
    dt = torch.float32
    out['cache1'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['batch_size'], a['channels'], a['two'], a['height'], a['width'])
    dt = torch.float32
    out['cache2'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['gamma1'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'], a['channels'], a['three'], a['three'], a['three'])
    dt = torch.float32
    out['conv1_weight'] = (torch.randn(shape, device=device) * 0.006014065304058602).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['conv1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['gamma2'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['channels'], a['channels'], a['three'], a['three'], a['three'])
    dt = torch.float32
    out['conv2_weight'] = (torch.randn(shape, device=device) * 0.006014065304058602).to(dt)
    shape = (a['channels'],)
    dt = torch.float32
    out['conv2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
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


def _rms_silu(z, gamma):
    """RMS_norm(images=False): F.normalize over channels x sqrt(C) x gamma (bias 0), then SiLU."""
    zf = z.to(_acc(z))
    return F.silu(F.normalize(zf, dim=1) * (z.shape[1] ** 0.5) * gamma.to(zf.dtype)[:, None, None, None]).to(z.dtype)


def _causal_conv(z, cache, weight, bias):
    """CausalConv3d(k=3, padding=1) on a chunk with the previous chunks' last 2 input frames prepended."""
    return F.conv3d(F.pad(torch.cat((cache, z), dim=2), (1, 1, 1, 1, 0, 0)), weight, bias)


@torch.no_grad()
def run(x, cache1, cache2, gamma1, conv1_weight, conv1_bias, gamma2, conv2_weight, conv2_bias):
    """ResidualBlock.forward with feat_cache: returns the block output and the two convs' updated caches."""
    a1 = _rms_silu(x, gamma1)
    h = _causal_conv(a1, cache1, conv1_weight, conv1_bias)
    a2 = _rms_silu(h, gamma2)
    h = _causal_conv(a2, cache2, conv2_weight, conv2_bias)
    new1 = torch.cat((cache1, a1), dim=2)[:, :, -2:]
    new2 = torch.cat((cache2, a2), dim=2)[:, :, -2:]
    return x + h, new1, new2
