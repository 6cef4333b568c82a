import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_images'], a['num_patches'], a['vision_hidden'])
    dt = torch.bfloat16
    out['vision_outputs'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['vision_hidden'],)
    dt = torch.bfloat16
    out['mm_soft_emb_norm_weight'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['vision_hidden'], a['text_hidden'])
    dt = torch.bfloat16
    out['mm_input_projection_weight'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
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


@torch.no_grad()
def run(vision_outputs, mm_soft_emb_norm_weight, mm_input_projection_weight):
    b, n, d = vision_outputs.shape
    side, pooled = 64, 16
    k = side // pooled
    x = vision_outputs.view(b, pooled, k, pooled, k, d).mean(dim=(2, 4)).reshape(b, pooled * pooled, d)
    xf = x.to(_acc(x))
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-06) * (1.0 + mm_soft_emb_norm_weight.to(xf.dtype))
    return torch.matmul(xf.to(x.dtype), mm_input_projection_weight)
