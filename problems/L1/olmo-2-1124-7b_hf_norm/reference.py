import torch


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["num_tokens"], a["hidden_size"], device=device)).to(torch.float32),
        "weight": (1.0 + 0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.float32),
    }


@torch.no_grad()
def run(hidden_states, weight):
    _dtype = hidden_states.dtype
    to = torch.ops.aten.to.dtype(hidden_states, _dtype)
    pow_1 = torch.ops.aten.pow.Tensor_Scalar(to, 2)
    mean = torch.ops.aten.mean.dim(pow_1, [-1], True)
    add = torch.ops.aten.add.Tensor(mean, 1e-06)
    rsqrt = torch.ops.aten.rsqrt.default(add)
    mul = torch.ops.aten.mul.Tensor(to, rsqrt)
    mul_1 = torch.ops.aten.mul.Tensor(weight, mul)
    to_1 = torch.ops.aten.to.dtype(mul_1, _dtype)
    return to_1
