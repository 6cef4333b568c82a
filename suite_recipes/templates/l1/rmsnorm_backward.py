import torch


def run(grad_output, hidden_states, weight, eps):
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    x, dy, w = hidden_states.to(compute), grad_output.to(compute), weight.to(compute)
    rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
    x_hat = x * rstd
    grad_weight = (dy * x_hat).sum(dim=0)
    g = dy * w
    grad_input = rstd * (g - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
    return grad_input.to(hidden_states.dtype), grad_weight.to(weight.dtype)
