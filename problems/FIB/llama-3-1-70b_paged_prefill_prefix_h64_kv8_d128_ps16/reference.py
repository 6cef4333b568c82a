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
def run(q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, kv_last_page_len):
    _, page_size, num_kv_heads, head_dim = k_cache.shape
    acc = (torch.float64 if q.dtype == torch.float64 else torch.float32)
    output = torch.empty_like(q)
    for b in range(qo_indptr.shape[0] - 1):
        qs, qe = int(qo_indptr[b]), int(qo_indptr[b + 1])
        start, end = int(kv_indptr[b]), int(kv_indptr[b + 1])
        length = (end - start - 1) * page_size + int(kv_last_page_len[b])
        pages = kv_indices[start:end].long()
        k = k_cache[pages].reshape(-1, num_kv_heads, head_dim)[:length]
        v = v_cache[pages].reshape(-1, num_kv_heads, head_dim)[:length]
        output[qs:qe] = _attend(q[qs:qe], k, v, acc).to(q.dtype)
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


def _page_table_for(min_lengths, num_kv_indices, num_pages, page_size):
    """A page table whose sequence b holds at least min_lengths[b] tokens, using num_kv_indices pages."""
    batch_size = min_lengths.numel()
    needed = (min_lengths + page_size - 1) // page_size
    pages = needed + _split(num_kv_indices - int(needed.sum()), batch_size, 0)
    low = torch.clamp(min_lengths - (pages - 1) * page_size, min=1)
    last = low + (torch.rand(batch_size) * (page_size - low + 1)).long()
    kv_indices = torch.randperm(num_pages)[:num_kv_indices].to(torch.int32)
    return _offsets(pages), kv_indices, last.to(torch.int32)


def make_inputs(axes, device):
    b, tq, n, p = axes["batch_size"], axes["total_q"], axes["num_kv_indices"], axes["num_pages"]
    h, hkv, d, ps = axes["num_qo_heads"], axes["num_kv_heads"], axes["head_dim"], axes["page_size"]
    q_lens = _split(tq, b)
    kv_indptr, kv_indices, kv_last_page_len = _page_table_for(q_lens, n, p, ps)
    return {"q": torch.randn(tq, h, d).to(torch.bfloat16).to(device),
            "k_cache": torch.randn(p, ps, hkv, d).to(torch.bfloat16).to(device),
            "v_cache": torch.randn(p, ps, hkv, d).to(torch.bfloat16).to(device),
            "qo_indptr": _offsets(q_lens).to(device), "kv_indptr": kv_indptr.to(device),
            "kv_indices": kv_indices.to(device), "kv_last_page_len": kv_last_page_len.to(device)}
