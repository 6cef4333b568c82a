import torch


@torch.no_grad()
def run(probs, min_p, uniform):
    """Keep tokens with p >= min_p * max(p), then one token by inverse CDF in vocabulary order."""
    vocab_size = probs.shape[-1]
    acc = (torch.float64 if probs.dtype == torch.float64 else torch.float32)
    p = probs.to(acc)
    threshold = p.amax(dim=-1, keepdim=True) * min_p.to(acc).unsqueeze(-1)
    kept = torch.where(p >= threshold, p, torch.zeros_like(p))
    cdf = torch.cumsum(kept, dim=-1)
    samples = (cdf <= uniform.to(acc).unsqueeze(-1) * cdf[:, -1:]).sum(dim=-1).clamp(max=vocab_size - 1)
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
    min_p = torch.empty(b)
    uniform = torch.empty(b)
    for i in range(b):
        p = probs[i].to(torch.float64)
        ratio = torch.sort(p / p.max(), descending=True).values[:4096]
        gaps = ratio[:-1] / ratio[1:]
        target = 0.02 + 0.28 * float(torch.rand(()))
        n = int((ratio >= target).sum())                      # tokens kept at the target
        # Cut between two kept/dropped neighbours whose ratio differs by >= 1%: no rounding flips a token.
        wide = torch.nonzero(gaps >= 1.01).flatten() + 1
        n = int(wide[torch.argmin((wide - n).abs())])
        min_p[i] = float(torch.sqrt(ratio[n - 1] * ratio[n]))
        kept = torch.where(p >= p.max() * float(min_p[i]), p, torch.zeros_like(p))
        cdf = torch.cumsum(kept, 0)
        uniform[i] = _safe_uniform(cdf / cdf[-1])
    return {"probs": probs.to(device), "min_p": min_p.to(device), "uniform": uniform.to(device)}
