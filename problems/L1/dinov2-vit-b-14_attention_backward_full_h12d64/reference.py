import torch


def make_inputs(axes_and_scalars, device):
    """out and lse come from the forward pass on the same q, k, v, as a training step saves them."""
    shape = tuple(axes_and_scalars[k] for k in ("batch_size", "num_heads", "seq_len", "head_dim"))
    query, key, value, grad_output = (torch.randn(shape, device=device).to(torch.bfloat16) for _ in range(4))
    scores = (query.float() @ key.float().transpose(-1, -2)) * shape[-1] ** -0.5
    out = (torch.softmax(scores, dim=-1) @ value.float()).to(torch.bfloat16)
    return {"grad_output": grad_output, "query": query, "key": key, "value": value, "out": out,
            "lse": torch.logsumexp(scores, dim=-1)}


def run(grad_output, query, key, value, out, lse):
    compute = torch.promote_types(query.dtype, torch.float32)
    scale = query.shape[-1] ** -0.5
    q, k, v, do = (t.to(compute) for t in (query, key, value, grad_output))
    probs = torch.exp(q @ k.transpose(-1, -2) * scale - lse.to(compute).unsqueeze(-1))
    # Like FlashAttention, P and dS are rounded to the input dtype before their matrix products.
    grad_value = probs.to(query.dtype).to(compute).transpose(-1, -2) @ do
    grad_probs = do @ v.transpose(-1, -2)
    delta = (do * out.to(compute)).sum(dim=-1, keepdim=True)
    grad_scores = (probs * (grad_probs - delta) * scale).to(query.dtype).to(compute)
    grad_query = grad_scores @ k
    grad_key = grad_scores.transpose(-1, -2) @ q
    return grad_query.to(query.dtype), grad_key.to(key.dtype), grad_value.to(value.dtype)
