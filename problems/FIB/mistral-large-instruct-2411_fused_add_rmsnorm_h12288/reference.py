import torch


@torch.no_grad()
def run(input, residual, weight, eps):
    """FlashInfer fused_add_rmsnorm: residual += input (stored in the input dtype), output = RMSNorm of the sum."""
    acc = (torch.float64 if input.dtype == torch.float64 else torch.float32)
    x = input.to(acc) + residual.to(acc)
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight.to(acc)
    return normed.to(input.dtype), x.to(input.dtype)
