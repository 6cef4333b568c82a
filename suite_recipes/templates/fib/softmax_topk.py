import torch

TOP_K = __TOP_K__
RENORMALIZE = __RENORMALIZE__


@torch.no_grad()
def run(gating_output):
    acc = (torch.float64 if gating_output.dtype == torch.float64 else torch.float32)
    probs = torch.softmax(gating_output.to(acc), dim=-1)
    weights, ids = torch.topk(probs, TOP_K, dim=-1)        # sorted, largest first
    if RENORMALIZE:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, ids.to(torch.int32)


def make_inputs(axes, device):
    t, e = axes["num_tokens"], axes["num_experts"]
    # Router logits in [-3, 3) with distinct values at least 4.8/num_experts apart: top-k has no ties.
    ranks = torch.argsort(torch.rand(t, e), dim=-1).to(torch.float32)
    logits = (ranks + 0.2 * torch.rand(t, e)) * (6.0 / e) - 3.0
    return {"gating_output": logits.to(device)}
