import math

import torch
import torch.nn.functional as F


__MAKE_INPUTS__



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




def _llama3_inv_freq(dim, theta, factor, low_freq_factor, high_freq_factor, original, device):
    # transformers' _compute_llama3_parameters (modeling_rope_utils.py), in float64
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=device, dtype=torch.float64) / dim))
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > original / low_freq_factor, inv_freq / factor, inv_freq)
    if high_freq_factor == low_freq_factor:
        return scaled
    smooth = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= original / high_freq_factor) & (wavelen <= original / low_freq_factor)
    return torch.where(medium, smoothed, scaled)


def _yarn_inv_freq(dim, theta, factor, beta_fast, beta_slow, original, device):
    # DeepSeek's yarn_find_correction_range / yarn_linear_ramp_mask (mscale / mscale_all_dim = 1 here)
    def correction(rotations):
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(theta))
    low = max(math.floor(correction(beta_fast)), 0)
    high = min(math.ceil(correction(beta_slow)), dim - 1)
    high = high + 0.001 if low == high else high
    extra = 1.0 / (theta ** (torch.arange(0, dim, 2, device=device, dtype=torch.float64) / dim))
    ramp = ((torch.arange(dim // 2, device=device, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    keep = 1 - ramp
    return extra / factor * (1 - keep) + extra * keep


def _angles(positions, inv_freq, ref):
    """cos/sin [*positions.shape, 2 * len(inv_freq)] (halves repeated), angles formed in float64."""
    freqs = positions.to(torch.float64)[..., None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(_acc(ref)), emb.sin().to(_acc(ref))


def _deinterleave(x):
    # DeepSeek's interleaved rope layout: (re, im) pairs -> halves, then rotate-half applies
    d = x.shape[-1]
    return x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).reshape(x.shape)


@torch.no_grad()
def run(hidden_states, topk_ids, topk_weights, w_gate, w_up, w_down__SHARED_ARGS__):
    acc = _acc(hidden_states)
    out = torch.zeros(hidden_states.shape, device=hidden_states.device, dtype=acc)
    for j in range(w_gate.shape[0]):  # this rank's experts: global ids 0..local_experts-1
        token, slot = torch.where(topk_ids == j)
        x = hidden_states[token]
        x = (x.to(acc) * topk_weights[token, slot, None].to(acc)).to(x.dtype)  # Llama-4 scales the expert's input
        h = F.silu(F.linear(x, w_gate[j])) * F.linear(x, w_up[j])
        out.index_add_(0, token, F.linear(h, w_down[j]).to(acc))
    __SHARED__
    return out.to(hidden_states.dtype)
