import torch

EPS = 1e-06


def make_inputs(axes, device):
    t, h = axes["batch_size"], axes["hidden_size"]
    return {"input": torch.randn(t, h, device=device).to(torch.bfloat16),
            "residual": torch.randn(t, h, device=device).to(torch.bfloat16),
            "weight": (1.0 + 0.1 * torch.randn(h, device=device)).to(torch.bfloat16)}


@torch.no_grad()
def run(input, residual, weight):
    """flashinfer.fused_add_rmsnorm(input, residual, weight, eps) updates both in place: residual <- input +
    residual (the fp32 sum rounded to the residual's dtype), input <- rmsnorm(the fp32 sum) * weight."""
    acc = torch.promote_types(input.dtype, torch.float32)
    x = input.to(acc) + residual.to(acc)
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * weight.to(acc)
    return normed.to(input.dtype), x.to(residual.dtype)
