import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_positions'], a['hidden_size'])
    dt = torch.bfloat16
    out['pos_embed_weight'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['num_images'], a['three'])
    dt = torch.int64
    out['grid_thw'] = (torch.tensor([[1, a['grid_h'], a['grid_w']], [1, a['grid_w'] // 2, a['grid_h'] // 2]] * a['num_pairs'], device=device)).to(dt)
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
def run(hidden_states, pos_embed_weight, grid_thw):
    side, merge = 48, 2
    idx_list, weight_list, sizes = [[], [], [], []], [[], [], [], []], []
    for t, h, w in grid_thw.tolist():
        h_idxs = torch.linspace(0, side - 1, h, device=grid_thw.device)
        w_idxs = torch.linspace(0, side - 1, w, device=grid_thw.device)
        hf, wf = h_idxs.int(), w_idxs.int()
        hc, wc = (hf + 1).clip(max=side - 1), (wf + 1).clip(max=side - 1)
        dh, dw = h_idxs - hf, w_idxs - wf
        bh, bhc = hf * side, hc * side
        indices = [(bh[:, None] + wf[None]).flatten(), (bh[:, None] + wc[None]).flatten(),
                   (bhc[:, None] + wf[None]).flatten(), (bhc[:, None] + wc[None]).flatten()]
        weights = [((1 - dh)[:, None] * (1 - dw)[None]).flatten(), ((1 - dh)[:, None] * dw[None]).flatten(),
                   (dh[:, None] * (1 - dw)[None]).flatten(), (dh[:, None] * dw[None]).flatten()]
        for i in range(4):
            idx_list[i].append(indices[i])
            weight_list[i].append(weights[i])
        sizes.append((t, h, w))
    idx = torch.stack([torch.cat(i) for i in idx_list]).long()
    weight = torch.stack([torch.cat(w) for w in weight_list]).to(pos_embed_weight.dtype)
    pos = pos_embed_weight[idx] * weight[:, :, None]
    pos = pos[0] + pos[1] + pos[2] + pos[3]
    out, start = [], 0
    for t, h, w in sizes:
        p = pos[start:start + h * w].repeat(t, 1)
        start += h * w
        out.append(p.view(t, h // merge, merge, w // merge, merge, -1).permute(0, 1, 3, 2, 4, 5).flatten(0, 4))
    return hidden_states + torch.cat(out)
