import torch

N_GROUP = 8
TOPK_GROUP = 4
TOP_K = 8
ROUTED_SCALING_FACTOR = 2.5


@torch.no_grad()
def run(gating_output, e_score_correction_bias):
    acc = (torch.float64 if gating_output.dtype == torch.float64 else torch.float32)
    num_tokens, num_experts = gating_output.shape
    scores = torch.sigmoid(gating_output.to(acc))
    choice = scores + e_score_correction_bias.to(acc)                 # bias steers selection only
    group_scores = choice.view(num_tokens, N_GROUP, -1).topk(2, dim=-1).values.sum(dim=-1)
    group_idx = group_scores.topk(TOPK_GROUP, dim=-1).indices
    group_mask = torch.zeros_like(group_scores).scatter(1, group_idx, 1.0)
    expert_mask = group_mask.unsqueeze(-1).expand(num_tokens, N_GROUP, num_experts // N_GROUP).reshape(num_tokens, -1)
    masked = choice.masked_fill(expert_mask == 0, float("-inf"))
    ids = torch.topk(masked, TOP_K, dim=-1).indices                    # sorted by biased score
    weights = scores.gather(1, ids)
    weights = weights / weights.sum(dim=-1, keepdim=True) * ROUTED_SCALING_FACTOR
    return weights, ids.to(torch.int32)


def _sidon(n):
    """Erdos-Turan: 2pk + (k^2 mod p) for a prime p >= n; all pairwise sums are distinct."""
    p = n
    while any(p % f == 0 for f in range(2, int(p ** 0.5) + 1)):
        p += 1
    return [2 * p * k + (k * k) % p for k in range(n)]


def make_inputs(axes, device):
    t, e = axes["num_tokens"], axes["num_experts"]
    # Biased scores are a shuffled Sidon set scaled into [0.25, 0.75]: expert scores and every group's
    # top-2 sum are distinct by >= 3.8e-6 (rounding moves them by ~1e-7), so no selection can tie.
    sidon = torch.tensor(_sidon(e), dtype=torch.float64)
    target = 0.25 + 0.5 * sidon / sidon.max()
    choice = target[torch.argsort(torch.rand(t, e), dim=-1)]
    bias = ((torch.rand(e, dtype=torch.float64) - 0.5) * 0.4).to(torch.float32)
    sig = choice - bias.to(torch.float64)
    logits = torch.log(sig / (1 - sig)).to(torch.float32)
    return {"gating_output": logits.to(device), "e_score_correction_bias": bias.to(device)}
