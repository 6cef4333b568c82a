import torch

GRAD = ("grad_output",)


@torch.no_grad()
def run(expert_output, topk_weights, src_rows, grad_output):
    """Gradients of out[t] = sum_k topk_weights[t, k] * expert_output[src_rows[t, k]]."""
    num_tokens, top_k = src_rows.shape
    acc = (torch.float64 if expert_output.dtype == torch.float64 else torch.float32)
    rows = src_rows.reshape(-1).long()
    g = grad_output.to(acc).unsqueeze(1)                                             # [T, 1, H]
    gathered = expert_output[rows].reshape(num_tokens, top_k, -1).to(acc)
    grad_weights = (gathered * g).sum(dim=-1)                                        # [T, K]
    grad_expert = torch.zeros(expert_output.shape, dtype=acc, device=expert_output.device)
    grad_expert[rows] = (topk_weights.to(acc).unsqueeze(-1) * g).reshape(num_tokens * top_k, -1)
    return grad_expert.to(expert_output.dtype), grad_weights


def _routes(num_tokens, num_experts, top_k):
    """Distinct experts per token, with a skewed (Zipf-like) expert popularity as real routers show."""
    popularity = 1.0 / torch.arange(1, num_experts + 1, dtype=torch.float32) ** 0.5
    popularity = popularity[torch.randperm(num_experts)]
    return torch.multinomial(popularity.expand(num_tokens, -1), top_k, replacement=False)


def make_inputs(axes, device):
    t, e, k, h = axes["num_tokens"], axes["num_experts"], axes["top_k"], axes["hidden_size"]
    flat = _routes(t, e, k).reshape(-1)
    order = torch.sort(flat, stable=True).indices
    src_rows = torch.empty_like(order)
    src_rows[order] = torch.arange(t * k)                   # where each (token, k) result sits
    weights = torch.softmax(torch.randn(t, k), dim=-1)
    inputs = {"expert_output": torch.randn(t * k, h).to(torch.bfloat16).to(device),
              "topk_weights": weights.to(device), "src_rows": src_rows.reshape(t, k).to(torch.int32).to(device)}
    if "grad_output" in GRAD:
        inputs["grad_output"] = torch.randn(t, h).to(torch.bfloat16).to(device)
    return inputs
