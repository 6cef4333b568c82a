import torch


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["num_tokens"], a["hidden_size"], device=device)).to(torch.float32),
        "weight": (1.0 + 0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.float32),
        "bias": (0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.float32),
    }


@torch.no_grad()
def run(hidden_states, weight, bias):
    layer_norm = torch.ops.aten.layer_norm.default(hidden_states, [768], weight, bias, 1e-12, False)
    return layer_norm
