import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['seq_len'], a['num_heads'], a['head_dim'])
    dt = torch.float32
    out['r'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_heads'], a['head_dim'])
    dt = torch.float32
    out['w'] = (torch.exp(-torch.sigmoid(torch.randn(shape, device=device)) / math.e ** 0.5)).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_heads'], a['head_dim'])
    dt = torch.float32
    out['k'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_heads'], a['head_dim'])
    dt = torch.float32
    out['v'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_heads'], a['head_dim'])
    dt = torch.float32
    out['kk'] = (F.normalize(torch.randn(shape, device=device), dim=-1)).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_heads'], a['head_dim'])
    dt = torch.float32
    out['a'] = (torch.rand(shape, device=device)).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['head_dim'], a['head_dim'])
    dt = torch.float32
    out['state'] = (torch.randn(shape, device=device) * 0.5).to(dt)
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
def run(r, w, k, v, kk, a, state):
    """RWKV-7 time-mixing recurrence per head (BlinkDL RWKV-v7 reference):

    S_t = S_(t-1) * w_t^T - (S_(t-1) kk_t) (kk_t * a_t)^T + v_t k_t^T,  y_t = S_t r_t.
    r, w (decay in (0, 1)), k, v, kk (L2-normalised), a (in-context rate): [b, t, h, n]; state [b, h, n, n] (v x k).
    """
    acc = _acc(state)
    r, w, k, v, kk, a = (x.to(acc) for x in (r, w, k, v, kk, a))
    s = state.to(acc)
    ys = []
    for t in range(r.shape[1]):
        s = s * w[:, t, :, None, :] - (s @ kk[:, t, :, :, None]) * (kk[:, t] * a[:, t])[:, :, None, :] \
            + v[:, t, :, :, None] * k[:, t, :, None, :]
        ys.append((s @ r[:, t, :, :, None])[..., 0])
    return torch.stack(ys, dim=1).to(state.dtype), s.to(state.dtype)
