import torch
import torch.nn.functional as F


HOTNESS = [3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1]
ROWS = [40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956, 405282, 10, 2209, 11938, 155, 4, 976, 14, 40000000, 40000000, 40000000, 590152, 12973, 108, 36]


def _table_rows(total_rows):
    """Each table keeps its published size up to a cap; the cap is the one that gives total_rows rows."""
    low, high = 1, max(ROWS)
    while low < high:
        cap = (low + high) // 2
        if sum(min(r, cap) for r in ROWS) < total_rows:
            low = cap + 1
        else:
            high = cap
    return [min(r, low) for r in ROWS]


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    rows = _table_rows(a["total_rows"])
    assert sum(rows) == a["total_rows"], "total_rows is not a capped sum of the published table sizes"
    offsets = [0]
    for r in rows:
        offsets.append(offsets[-1] + r)
    batch = a["batch_size"]
    values = torch.cat([torch.randint(0, r, (batch * h,), device=device) for r, h in zip(rows, HOTNESS)])
    weights = torch.randn(a["total_rows"], a["embedding_dim"], device=device) * 0.1
    return {"values": values, "table_offsets": torch.tensor(offsets, dtype=torch.int64, device=device),
            "weights": weights}


@torch.no_grad()
def run(values, table_offsets, weights):
    batch = values.shape[0] // sum(HOTNESS)
    pooled, start = [], 0
    for table, hot in enumerate(HOTNESS):
        ids = values[start:start + batch * hot].view(batch, hot) + table_offsets[table]
        pooled.append(F.embedding(ids, weights).sum(dim=1))  # F.embedding_bag(ids, weights, mode="sum")
        start += batch * hot
    return torch.stack(pooled, dim=1)
