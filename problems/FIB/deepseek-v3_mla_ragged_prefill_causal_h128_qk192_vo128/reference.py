import math
import torch

SM_SCALE = 0.1352337788608801
HEAD_CHUNK = 16  # heads per score block: bounds the reference's memory at long sequences


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
    b, tq, tkv = axes["batch_size"], axes["total_q"], axes["total_kv"]
    h, dqk, dv = axes["num_heads"], axes["head_dim_qk"], axes["head_dim_vo"]
    q_lens = _split(tq, b, 1)
    kv_lens = q_lens + _split(tkv - tq, b, 0)            # each sequence: a cached prefix, then its new tokens
    return {"q": torch.randn(tq, h, dqk, device=device).to(torch.bfloat16),
            "k": torch.randn(tkv, h, dqk, device=device).to(torch.bfloat16),
            "v": torch.randn(tkv, h, dv, device=device).to(torch.bfloat16),
            "qo_indptr": _offsets(q_lens).to(device), "kv_indptr": _offsets(kv_lens).to(device)}


@torch.no_grad()
def run(q, k, v, qo_indptr, kv_indptr):
    total_q, num_heads, _ = q.shape
    acc = torch.promote_types(q.dtype, torch.float32)
    output = torch.empty(total_q, num_heads, v.shape[-1], dtype=q.dtype, device=q.device)
    lse = torch.empty(total_q, num_heads, dtype=acc, device=q.device)
    for b in range(qo_indptr.shape[0] - 1):
        q0, q1 = int(qo_indptr[b]), int(qo_indptr[b + 1])
        k0, k1 = int(kv_indptr[b]), int(kv_indptr[b + 1])
        lq, lk = q1 - q0, k1 - k0
        # causal, aligned at the end: query i sits at position lk - lq + i and sees keys 0 .. lk - lq + i
        rows = torch.arange(lq, device=q.device)[:, None] + (lk - lq)
        masked = torch.arange(lk, device=q.device)[None, :] > rows
        for h0 in range(0, num_heads, HEAD_CHUNK):
            h1 = min(h0 + HEAD_CHUNK, num_heads)
            qb = q[q0:q1, h0:h1].to(acc).transpose(0, 1)                 # [H, lq, 192]
            kb = k[k0:k1, h0:h1].to(acc).transpose(0, 1)                 # [H, lk, 192]
            vb = v[k0:k1, h0:h1].to(acc).transpose(0, 1)                 # [H, lk, 128]
            scores = torch.matmul(qb, kb.transpose(1, 2)) * SM_SCALE
            scores = scores.masked_fill(masked, float("-inf"))
            lse[q0:q1, h0:h1] = (torch.logsumexp(scores, dim=-1) / math.log(2.0)).transpose(0, 1)
            probs = torch.softmax(scores, dim=-1).to(q.dtype).to(acc)    # P in bf16 for the PV MMA, as FlashInfer
            output[q0:q1, h0:h1] = torch.matmul(probs, vb).transpose(0, 1).to(q.dtype)
    return output, lse
