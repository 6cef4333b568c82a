import torch


@torch.no_grad()
def run(hidden_states, topk_ids):
    num_tokens, top_k = topk_ids.shape
    flat = topk_ids.reshape(-1).long()
    order = torch.sort(flat, stable=True).indices             # (token, k) slots grouped by expert
    permuted = hidden_states[torch.div(order, top_k, rounding_mode="floor")]
    boundaries = torch.arange(128 + 1, device=topk_ids.device)
    expert_offsets = torch.searchsorted(flat[order], boundaries).to(torch.int32)
    return permuted, expert_offsets, order.to(torch.int32)


def _routes(num_tokens, num_experts, top_k):
    """Distinct experts per token, with a skewed (Zipf-like) expert popularity as real routers show."""
    popularity = 1.0 / torch.arange(1, num_experts + 1, dtype=torch.float32) ** 0.5
    popularity = popularity[torch.randperm(num_experts)]
    return torch.multinomial(popularity.expand(num_tokens, -1), top_k, replacement=False)


def make_inputs(axes, device):
    t, e, k, h = axes["num_tokens"], axes["num_experts"], axes["top_k"], axes["hidden_size"]
    return {"hidden_states": torch.randn(t, h).to(torch.bfloat16).to(device),
            "topk_ids": _routes(t, e, k).to(torch.int32).to(device)}
