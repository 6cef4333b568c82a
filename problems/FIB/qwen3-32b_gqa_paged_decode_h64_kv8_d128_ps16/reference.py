import math
import torch


@torch.no_grad()
def run(q, k_cache, v_cache, kv_indptr, kv_indices, kv_last_page_len):
    batch_size, num_qo_heads, head_dim = q.shape
    _, page_size, num_kv_heads, _ = k_cache.shape
    sm_scale = 1.0 / math.sqrt(head_dim)
    group = num_qo_heads // num_kv_heads
    acc = (torch.float64 if q.dtype == torch.float64 else torch.float32)
    output = torch.empty_like(q)
    lse = torch.empty((batch_size, num_qo_heads), dtype=acc, device=q.device)
    for b in range(batch_size):
        start, end = int(kv_indptr[b]), int(kv_indptr[b + 1])
        length = (end - start - 1) * page_size + int(kv_last_page_len[b])
        pages = kv_indices[start:end].long()
        k = k_cache[pages].reshape(-1, num_kv_heads, head_dim)[:length].to(acc)
        v = v_cache[pages].reshape(-1, num_kv_heads, head_dim)[:length].to(acc)
        qb = q[b].to(acc).reshape(num_kv_heads, group, head_dim)
        scores = torch.matmul(qb, k.permute(1, 2, 0)) * sm_scale          # [kv_heads, group, length]
        lse[b] = (torch.logsumexp(scores, dim=-1) / math.log(2.0)).reshape(num_qo_heads)
        probs = torch.softmax(scores, dim=-1).to(q.dtype).to(acc)      # P in the KV dtype, as FlashInfer's PV MMA
        out = torch.matmul(probs, v.permute(1, 0, 2))                      # [kv_heads, group, head_dim]
        output[b] = out.reshape(num_qo_heads, head_dim).to(q.dtype)
    return output, lse


def _split(total, parts, minimum=1):
    """A random composition of `total` into `parts` sizes, each at least `minimum`."""
    extra = total - parts * minimum
    assert extra >= 0
    cuts = torch.sort(torch.randint(0, extra + 1, (parts - 1,))).values
    bounds = torch.cat([torch.zeros(1, dtype=torch.long), cuts, torch.full((1,), extra, dtype=torch.long)])
    return torch.diff(bounds) + minimum


def _offsets(sizes):
    return torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(sizes, 0)]).to(torch.int32)


def _page_table(batch_size, num_kv_indices, num_pages, page_size):
    """Pages per sequence split at random (each >= 1); pages drawn as a random permutation of the pool."""
    kv_indptr = _offsets(_split(num_kv_indices, batch_size))
    kv_indices = torch.randperm(num_pages)[:num_kv_indices].to(torch.int32)
    kv_last_page_len = torch.randint(1, page_size + 1, (batch_size,), dtype=torch.int32)
    return kv_indptr, kv_indices, kv_last_page_len


def make_inputs(axes, device):
    b, n, p = axes["batch_size"], axes["num_kv_indices"], axes["num_pages"]
    h, hkv, d, ps = axes["num_qo_heads"], axes["num_kv_heads"], axes["head_dim"], axes["page_size"]
    kv_indptr, kv_indices, kv_last_page_len = _page_table(b, n, p, ps)
    return {"q": torch.randn(b, h, d).to(torch.bfloat16).to(device),
            "k_cache": torch.randn(p, ps, hkv, d).to(torch.bfloat16).to(device),
            "v_cache": torch.randn(p, ps, hkv, d).to(torch.bfloat16).to(device),
            "kv_indptr": kv_indptr.to(device), "kv_indices": kv_indices.to(device),
            "kv_last_page_len": kv_last_page_len.to(device)}
