import torch


@torch.no_grad()
def run(hidden_states, weight, eps):
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    x = hidden_states.to(compute)
    output = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
    output = output * (1.0 + weight.to(compute))
    return output.to(hidden_states.dtype)
