import torch


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["num_tokens"], a["hidden_size"], device=device)).to(torch.float32),
        "weight": (1.0 + 0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.float32),
        "grad_output": (torch.randn(a["num_tokens"], a["hidden_size"], device=device)).to(torch.float32),
    }


def _forward(hidden_states, weight, bias):
    layer_norm = torch.ops.aten.layer_norm.default(hidden_states, [1024], weight, bias, 1e-05, False)
    return layer_norm


def run(hidden_states, weight, grad_output):
    bias = torch.zeros((1024,), dtype=hidden_states.dtype, device=hidden_states.device)  # no gradient depends on it
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (hidden_states, weight, bias,)]
        output = _forward(*leaves)
        return tuple(torch.autograd.grad(output, leaves, grad_output))
