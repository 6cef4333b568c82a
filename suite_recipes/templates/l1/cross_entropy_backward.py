import torch


def run(logits, labels, grad_loss):
    x = logits.to(torch.promote_types(logits.dtype, torch.float32))
    probs = torch.softmax(x, dim=-1)
    minus_one = torch.full((labels.shape[0], 1), -1.0, dtype=x.dtype, device=x.device)
    grad = probs.scatter_add(-1, labels.unsqueeze(-1), minus_one) * grad_loss.unsqueeze(-1).to(x.dtype)
    return grad.to(logits.dtype)
