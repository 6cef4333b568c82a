import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_chunks'], a['num_heads'], a['head_dim'], a['state_size'])
    dt = torch.float32
    out['states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['num_chunks'])
    dt = torch.float32
    out['dA_chunk_sum'] = (-(torch.rand(shape, device=device) * 2.0 + 0.05)).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['head_dim'], a['state_size'])
    dt = torch.float32
    out['initial_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
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
def run(states, dA_chunk_sum, initial_states):
    """Inter-chunk recurrence: S_c = exp(dA_sum_c) * S_(c-1) + states_c, from initial_states.

    Returns the state entering each chunk [b, c, h, p, n] and the final state [b, h, p, n].
    """
    acc = _acc(states)
    s = initial_states.to(acc)
    entering = []
    for c in range(states.shape[1]):
        entering.append(s)
        s = torch.exp(dA_chunk_sum[:, :, c].to(acc))[:, :, None, None] * s + states[:, c].to(acc)
    return torch.stack(entering, dim=1), s
