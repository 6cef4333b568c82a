import math
import torch


def _attend(q, k, v, acc):
    """Causal attention of q [lq, H, D] over k, v [lk, Hkv, D], aligned bottom-right (query i sits at
    position lk - lq + i), heads grouped over the KV heads."""
    lq, num_qo_heads, head_dim = q.shape
    lk, num_kv_heads, _ = k.shape
    group = num_qo_heads // num_kv_heads
    sm_scale = 1.0 / math.sqrt(head_dim)
    qh = q.to(acc).reshape(lq, num_kv_heads, group, head_dim).permute(1, 2, 0, 3)  # [Hkv, G, lq, D]
    kh = k.to(acc).permute(1, 2, 0).unsqueeze(1)                                   # [Hkv, 1, D, lk]
    vh = v.to(acc).permute(1, 0, 2).unsqueeze(1)                                   # [Hkv, 1, lk, D]
    scores = torch.matmul(qh, kh) * sm_scale
    future = torch.ones(lq, lk, dtype=torch.bool, device=q.device).triu(lk - lq + 1)
    scores = scores.masked_fill(future, float("-inf"))
    probs = torch.softmax(scores, dim=-1).to(v.dtype).to(acc)                       # P in the KV dtype for PV
    out = torch.matmul(probs, vh)                                                   # [Hkv, G, lq, D]
    return out.permute(2, 0, 1, 3).reshape(lq, num_qo_heads, head_dim)


@torch.no_grad()
def run(q, k, v, qo_indptr, kv_indptr):
    acc = (torch.float64 if q.dtype == torch.float64 else torch.float32)
    output = torch.empty_like(q)
    for b in range(qo_indptr.shape[0] - 1):
        qs, qe = int(qo_indptr[b]), int(qo_indptr[b + 1])
        ks, ke = int(kv_indptr[b]), int(kv_indptr[b + 1])
        output[qs:qe] = _attend(q[qs:qe], k[ks:ke], v[ks:ke], acc).to(q.dtype)
    return output


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
    b, tq, tk = axes["batch_size"], axes["total_q"], axes["total_kv"]
    h, hkv, d = axes["num_qo_heads"], axes["num_kv_heads"], axes["head_dim"]
    q_lens = _split(tq, b)
    kv_lens = q_lens + _split(tk - tq, b, 0)   # a cached prefix of random length before each chunk
    return {"q": torch.randn(tq, h, d).to(torch.bfloat16).to(device),
            "k": torch.randn(tk, hkv, d).to(torch.bfloat16).to(device),
            "v": torch.randn(tk, hkv, d).to(torch.bfloat16).to(device),
            "qo_indptr": _offsets(q_lens).to(device), "kv_indptr": _offsets(kv_lens).to(device)}
