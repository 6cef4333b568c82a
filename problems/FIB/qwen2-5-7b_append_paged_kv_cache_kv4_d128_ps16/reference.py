import torch

PAGE_SIZE = 16  # tokens per KV page


@torch.no_grad()
def run(append_key, append_value, batch_indices, positions, kv_indices, kv_indptr):
    """The slots this append writes: token i lands in page kv_indices[kv_indptr[batch_indices[i]] + positions[i]
    // PAGE_SIZE] at slot positions[i] % PAGE_SIZE, i.e. row slot_indices[i] of the cache viewed as
    [num_pages * PAGE_SIZE, num_kv_heads, head_dim]; the rows written there are the token's K and V.
    `k_cache.view(-1, H, D)[slot_indices] = k_rows` (and the same for V) is the whole-cache result."""
    pos = positions.long()
    page = kv_indices[kv_indptr[batch_indices.long()].long() + torch.div(pos, PAGE_SIZE, rounding_mode="floor")]
    slot_indices = page.long() * PAGE_SIZE + torch.remainder(pos, PAGE_SIZE)
    return slot_indices, append_key.clone(), append_value.clone()


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
    b, nnz, n, p = axes["batch_size"], axes["nnz"], axes["num_kv_indices"], axes["num_pages"]
    hkv, d, ps = axes["num_kv_heads"], axes["head_dim"], axes["page_size"]
    append_lens = _split(nnz, b)
    kv_indptr, kv_indices, last = _page_table_for(append_lens, n, p, ps)
    seq_lens = (kv_indptr[1:] - kv_indptr[:-1] - 1).long() * ps + last.long()
    batch_indices = torch.repeat_interleave(torch.arange(b), append_lens)
    starts = torch.repeat_interleave(seq_lens - append_lens, append_lens)
    within = torch.arange(nnz) - torch.repeat_interleave(_offsets(append_lens)[:-1].long(), append_lens)
    return {"append_key": torch.randn(nnz, hkv, d).to(torch.bfloat16).to(device),
            "append_value": torch.randn(nnz, hkv, d).to(torch.bfloat16).to(device),
            "batch_indices": batch_indices.to(torch.int32).to(device),
            "positions": (starts + within).to(torch.int32).to(device),
            "kv_indices": kv_indices.to(device), "kv_indptr": kv_indptr.to(device)}
