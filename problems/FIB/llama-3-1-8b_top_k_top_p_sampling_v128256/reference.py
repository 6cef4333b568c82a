import torch


@torch.no_grad()
def run(probs, top_k, top_p, uniform):
    """Top-k, renormalise, top-p (smallest set of most likely tokens whose mass reaches top_p), then one
    token by inverse-CDF over the kept tokens in vocabulary order with the given uniform number."""
    batch_size, vocab_size = probs.shape
    acc = (torch.float64 if probs.dtype == torch.float64 else torch.float32)
    p = probs.to(acc)
    sorted_p, order = torch.sort(p, dim=-1, descending=True)
    rank = torch.arange(vocab_size, device=probs.device).unsqueeze(0)
    in_top_k = rank < top_k.unsqueeze(-1)
    p_k = torch.where(in_top_k, sorted_p, torch.zeros_like(sorted_p))
    p_k = p_k / p_k.sum(dim=-1, keepdim=True)
    mass_before = torch.cumsum(p_k, dim=-1) - p_k
    keep_sorted = in_top_k & (mass_before < top_p.to(acc).unsqueeze(-1))
    keep = torch.zeros_like(keep_sorted).scatter(1, order, keep_sorted)
    kept = torch.where(keep, p, torch.zeros_like(p))
    cdf = torch.cumsum(kept, dim=-1)
    threshold = uniform.to(acc).unsqueeze(-1) * cdf[:, -1:]
    samples = (cdf <= threshold).sum(dim=-1).clamp(max=vocab_size - 1)
    return samples.to(torch.int32)


def _safe_uniform(cdf, margin=1e-4):
    """A uniform number whose position in the normalised cdf (float64, ascending, last = 1) keeps
    `margin` from every bucket edge, so rounding cannot change which token it selects."""
    cdf = cdf.to(torch.float64)
    lower = torch.cat([torch.zeros(1, dtype=torch.float64), cdf[:-1]])
    width = cdf - lower
    u = float(torch.rand(()))
    i = int(torch.searchsorted(cdf, torch.tensor([u], dtype=torch.float64), right=True).clamp(max=cdf.numel() - 1))
    if width[i] > 0 and u - float(lower[i]) >= margin and float(cdf[i]) - u >= margin:
        return u
    wide = torch.nonzero(width >= 4 * margin).flatten()
    if wide.numel() == 0:
        wide = torch.argmax(width).reshape(1)
    j = int(wide[torch.argmin((wide - i).abs())])
    return float((lower[j] + cdf[j]) / 2)


def _peaked_probs(rows, vocab, device):
    """Softmax of logits with LLM-like spread whose values are all distinct (gaps >= 1e-5)."""
    scale = torch.empty(rows, 1).uniform_(2.5, 5.0)
    logits = torch.sort(torch.randn(rows, vocab), dim=-1).values * scale
    logits = logits + torch.arange(vocab, dtype=torch.float32) * 1e-5
    perm = torch.argsort(torch.rand(rows, vocab), dim=-1)
    logits = torch.gather(logits, 1, perm)
    return torch.softmax(logits.to(torch.float64), dim=-1).to(torch.float32)


def make_inputs(axes, device):
    b, v = axes["batch_size"], axes["vocab_size"]
    probs = _peaked_probs(b, v, device)
    top_k = torch.tensor([5, 10, 20, 40, 50, 64, 100, 500])[torch.randint(0, 8, (b,))]
    top_p = torch.empty(b)
    uniform = torch.empty(b)
    for i in range(b):
        p = probs[i].to(torch.float64)
        sorted_p, order = torch.sort(p, descending=True)
        k = int(top_k[i])
        renorm = sorted_p[:k] / sorted_p[:k].sum()
        cum = torch.cumsum(renorm, 0)
        # The top-p cut falls mid-way through a token of renormalised mass >= 2e-4: margin 1e-4.
        m = int(torch.searchsorted(cum, torch.tensor([0.5 + 0.48 * float(torch.rand(()))], dtype=torch.float64)))
        m = min(m, k - 1, int((renorm >= 2e-4).sum()) - 1)
        top_p[i] = float((cum[m - 1] if m > 0 else 0.0) + renorm[m] / 2)
        kept = torch.zeros_like(p)
        kept[order[:m + 1]] = p[order[:m + 1]]
        cdf = torch.cumsum(kept, 0)
        uniform[i] = _safe_uniform(cdf / cdf[-1])
    return {"probs": probs.to(device), "top_k": top_k.to(torch.int32).to(device),
            "top_p": top_p.to(device), "uniform": uniform.to(device)}
