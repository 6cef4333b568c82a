import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_heads'], a['seq_len'], a['head_dim'])
    dt = torch.bfloat16
    out['query'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_kv_heads'], a['seq_len'], a['head_dim'])
    dt = torch.bfloat16
    out['key'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['three'], a['batch_size'], a['seq_len'])
    dt = torch.int64
    out['position_ids'] = (_mrope_positions(a['batch_size'], a['seq_len'], device)).to(dt)
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




def _mrope_positions(batch, seq, device):
    """get_rope_index's 3-D positions for one image per sequence: a text prefix, an image of gh x gw merged tokens
    at (t, h, w) = (p, p + row, p + column), then text continuing from the largest position + 1."""
    prefix = min(16, seq // 4)
    avail = max(seq - 2 * prefix, 0)
    gh = max(math.isqrt(avail), 1)
    gw = avail // gh
    text = torch.arange(prefix)
    t_img = torch.full((gh * gw,), prefix)
    h_img = prefix + torch.arange(gh).repeat_interleave(gw)
    w_img = prefix + torch.arange(gw).repeat(gh)
    start = prefix + max(gh, gw) if gh * gw else prefix
    tail = start + torch.arange(seq - prefix - gh * gw)
    pos = torch.stack([torch.cat([text, t_img, tail]), torch.cat([text, h_img, tail]), torch.cat([text, w_img, tail])])
    return pos[:, None, :].expand(3, batch, seq).contiguous().to(device)


def _mrope_cos_sin(position_ids, dim, theta, section, ref, interleaved=False):
    """cos/sin [batch, seq, dim] from 3-D position ids [3, batch, seq]: M-RoPE takes the t/h/w frequencies by
    mrope_section chunks (Qwen2-VL), interleaved M-RoPE every third frequency (Qwen3-VL). Tables in fp32,
    returned in ref's dtype as the rotary modules do."""
    acc = _acc(ref)
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    freqs = position_ids.to(acc)[..., None] * inv_freq
    if interleaved:
        f = freqs[0].clone()
        for axis, offset in ((1, 1), (2, 2)):
            idx = slice(offset, section[axis] * 3, 3)
            f[..., idx] = freqs[axis, ..., idx]
        emb = torch.cat((f, f), dim=-1)
        return emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)
    chunks = list(section) * 2
    cos = torch.cat([c[i % 3] for i, c in enumerate(cos.split(chunks, dim=-1))], dim=-1)
    sin = torch.cat([s[i % 3] for i, s in enumerate(sin.split(chunks, dim=-1))], dim=-1)
    return cos, sin


@torch.no_grad()
def run(query, key, position_ids):
    cos, sin = _mrope_cos_sin(position_ids, query.shape[-1], 1000000.0, [16, 24, 24], query)
    cos, sin = cos[:, None], sin[:, None]
    return query * cos + _rotate_half(query) * sin, key * cos + _rotate_half(key) * sin
