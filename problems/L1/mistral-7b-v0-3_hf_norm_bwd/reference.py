import torch


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["num_tokens"], a["hidden_size"], device=device)).to(torch.bfloat16),
        "weight": (1.0 + 0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.bfloat16),
        "grad_output": (torch.randn(a["num_tokens"], a["hidden_size"], device=device)).to(torch.bfloat16),
    }


def _forward(hidden_states, weight):
    _dtype = hidden_states.dtype
    _acc = torch.float64 if _dtype == torch.float64 else torch.float32
    to = torch.ops.aten.to.dtype(hidden_states, _acc)
    pow_1 = torch.ops.aten.pow.Tensor_Scalar(to, 2)
    mean = torch.ops.aten.mean.dim(pow_1, [-1], True)
    add = torch.ops.aten.add.Tensor(mean, 1e-05)
    rsqrt = torch.ops.aten.rsqrt.default(add)
    mul = torch.ops.aten.mul.Tensor(to, rsqrt)
    to_1 = torch.ops.aten.to.dtype(mul, _dtype)
    mul_1 = torch.ops.aten.mul.Tensor(weight, to_1)
    return mul_1


def run(hidden_states, weight, grad_output):
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (hidden_states, weight,)]
        output = _forward(*leaves)
        return tuple(torch.autograd.grad(output, leaves, grad_output))
