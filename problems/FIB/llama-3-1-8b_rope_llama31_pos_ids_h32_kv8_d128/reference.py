import math
import torch

ROPE_THETA = 500000.0
FACTOR = 8.0
LOW_FREQ_FACTOR = 1.0
HIGH_FREQ_FACTOR = 4.0
OLD_CONTEXT = 8192


def _inv_freq(head_dim):
    """Llama-3.1 rope scaling: long wavelengths divided by FACTOR, short ones kept, a smooth ramp between."""
    low_wavelen, high_wavelen = OLD_CONTEXT / LOW_FREQ_FACTOR, OLD_CONTEXT / HIGH_FREQ_FACTOR
    out = []
    for i in range(head_dim // 2):
        freq = 1.0 / ROPE_THETA ** (2 * i / head_dim)
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            out.append(freq)
        elif wavelen > low_wavelen:
            out.append(freq / FACTOR)
        else:
            smooth = (OLD_CONTEXT / wavelen - LOW_FREQ_FACTOR) / (HIGH_FREQ_FACTOR - LOW_FREQ_FACTOR)
            out.append((1 - smooth) * freq / FACTOR + smooth * freq)
    return out


@torch.no_grad()
def run(q, k, pos_ids):
    head_dim = q.shape[-1]
    half = head_dim // 2
    acc = (torch.float64 if q.dtype == torch.float64 else torch.float32)
    inv_freq = torch.tensor(_inv_freq(head_dim), dtype=acc, device=q.device)
    angles = pos_ids.to(acc).unsqueeze(-1) * inv_freq              # [nnz, head_dim / 2]
    cos = torch.cat([torch.cos(angles), torch.cos(angles)], dim=-1).unsqueeze(1)
    sin = torch.cat([torch.sin(angles), torch.sin(angles)], dim=-1).unsqueeze(1)

    def rotate(x):
        x = x.to(acc)
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return (x * cos + rotated * sin).to(q.dtype)

    return rotate(q), rotate(k)


def _split(total, parts, minimum=1):
    """A random composition of `total` into `parts` sizes, each at least `minimum`."""
    extra = total - parts * minimum
    assert extra >= 0
    cuts = torch.sort(torch.randint(0, extra + 1, (parts - 1,))).values
    bounds = torch.cat([torch.zeros(1, dtype=torch.long), cuts, torch.full((1,), extra, dtype=torch.long)])
    return torch.diff(bounds) + minimum


def _offsets(sizes):
    return torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(sizes, 0)]).to(torch.int32)


def make_inputs(axes, device):
    nnz, h, hkv, d = axes["nnz"], axes["num_qo_heads"], axes["num_kv_heads"], axes["head_dim"]
    sequences = int(torch.randint(1, min(nnz, 16) + 1, ()))
    lens = _split(nnz, sequences)
    starts = torch.randint(0, 32768 - nnz, (sequences,))  # already-cached prefix of each sequence
    pos = torch.repeat_interleave(starts - _offsets(lens)[:-1].long(), lens) + torch.arange(nnz)
    return {"q": torch.randn(nnz, h, d).to(torch.bfloat16).to(device),
            "k": torch.randn(nnz, hkv, d).to(torch.bfloat16).to(device),
            "pos_ids": pos.to(torch.int32).to(device)}
