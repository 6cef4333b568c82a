import math
import torch

SM_SCALE = 0.1352337788608801  # mscale^2 / sqrt(qk_nope_head_dim + qk_rope_head_dim)


@torch.no_grad()
def run(q_nope, q_pe, ckv_cache, kpe_cache, kv_indptr, kv_indices, kv_last_page_len):
    batch_size, num_heads, kv_lora_rank = q_nope.shape
    page_size, rope_dim = kpe_cache.shape[1], kpe_cache.shape[2]
    acc = (torch.float64 if q_nope.dtype == torch.float64 else torch.float32)
    output = torch.empty_like(q_nope)
    lse = torch.empty((batch_size, num_heads), dtype=acc, device=q_nope.device)
    for b in range(batch_size):
        start, end = int(kv_indptr[b]), int(kv_indptr[b + 1])
        length = (end - start - 1) * page_size + int(kv_last_page_len[b])
        pages = kv_indices[start:end].long()
        ckv = ckv_cache[pages].reshape(-1, kv_lora_rank)[:length].to(acc)   # latent K and V  [L, 512]
        kpe = kpe_cache[pages].reshape(-1, rope_dim)[:length].to(acc)       # rotary key part [L, 64]
        scores = (torch.matmul(q_nope[b].to(acc), ckv.t()) + torch.matmul(q_pe[b].to(acc), kpe.t())) * SM_SCALE
        lse[b] = torch.logsumexp(scores, dim=-1) / math.log(2.0)
        probs = torch.softmax(scores, dim=-1).to(q_nope.dtype).to(acc)    # P in the cache dtype for PV
        output[b] = torch.matmul(probs, ckv).to(q_nope.dtype)
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
    h, r, e, ps = axes["num_heads"], axes["kv_lora_rank"], axes["qk_rope_head_dim"], axes["page_size"]
    kv_indptr, kv_indices, kv_last_page_len = _page_table(b, n, p, ps)
    return {"q_nope": torch.randn(b, h, r).to(torch.bfloat16).to(device),
            "q_pe": torch.randn(b, h, e).to(torch.bfloat16).to(device),
            "ckv_cache": torch.randn(p, ps, r).to(torch.bfloat16).to(device),
            "kpe_cache": torch.randn(p, ps, e).to(torch.bfloat16).to(device),
            "kv_indptr": kv_indptr.to(device), "kv_indices": kv_indices.to(device),
            "kv_last_page_len": kv_last_page_len.to(device)}
