import torch


@torch.no_grad()
def run(draft_probs, draft_token_ids, target_probs, uniform_accept, uniform_sample):
    """Chain speculative sampling: draft token i is accepted while u_i * q(token) < p(token); at the first
    rejection one token is drawn from normalise(max(p - q, 0)), or, if all were accepted, a bonus token
    from the target's last distribution; both by inverse CDF in vocabulary order with uniform_sample."""
    batch_size, num_spec, vocab_size = draft_probs.shape
    acc = (torch.float64 if draft_probs.dtype == torch.float64 else torch.float32)
    ids = draft_token_ids.long().unsqueeze(-1)
    q = torch.gather(draft_probs.to(acc), 2, ids).squeeze(-1)
    p = torch.gather(target_probs[:, :num_spec].to(acc), 2, ids).squeeze(-1)
    accept = uniform_accept.to(acc) * q < p
    accepted = torch.cumprod(accept.to(torch.int32), dim=-1).sum(dim=-1)
    output = torch.full((batch_size, num_spec + 1), -1, dtype=torch.int32, device=draft_probs.device)
    for b in range(batch_size):
        n = int(accepted[b])
        if n < num_spec:
            dist = torch.clamp(target_probs[b, n].to(acc) - draft_probs[b, n].to(acc), min=0)
        else:
            dist = target_probs[b, num_spec].to(acc)
        cdf = torch.cumsum(dist, dim=-1)
        token = (cdf <= uniform_sample[b].to(acc) * cdf[-1]).sum().clamp(max=vocab_size - 1)
        output[b, :n] = draft_token_ids[b, :n]
        output[b, n] = token.to(torch.int32)
    return output, accepted.to(torch.int32)


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
    b, s, v = axes["batch_size"], axes["num_spec"], axes["vocab_size"]
    base = torch.randn(b, s + 1, v) * 3.0
    target = torch.softmax(base + 0.7 * torch.randn(b, s + 1, v), dim=-1)
    draft = torch.softmax(base[:, :s] + 0.7 * torch.randn(b, s, v), dim=-1)
    ids = torch.multinomial(draft.reshape(b * s, v), 1).reshape(b, s)
    q = torch.gather(draft, 2, ids.unsqueeze(-1)).squeeze(-1).to(torch.float64)
    p = torch.gather(target[:, :s], 2, ids.unsqueeze(-1)).squeeze(-1).to(torch.float64)
    ratio = p / q
    u = torch.rand(b, s, dtype=torch.float64)
    near = (u - ratio).abs() < 1e-3                        # keep the accept test away from equality
    u = torch.where(near, torch.where(ratio > 0.5, ratio - 2e-3, ratio + 2e-3), u)
    accept = u * q < p
    accepted = torch.cumprod(accept.to(torch.int64), dim=-1).sum(dim=-1)
    uniform_sample = torch.empty(b)
    for i in range(b):
        n = int(accepted[i])
        dist = (target[i, n].to(torch.float64) - draft[i, n].to(torch.float64)).clamp(min=0) if n < s \
            else target[i, s].to(torch.float64)
        cdf = torch.cumsum(dist, 0)
        uniform_sample[i] = _safe_uniform(cdf / cdf[-1])
    return {"draft_probs": draft.to(device), "draft_token_ids": ids.to(torch.int32).to(device),
            "target_probs": target.to(device), "uniform_accept": u.to(torch.float32).to(device),
            "uniform_sample": uniform_sample.to(device)}
