import torch


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["num_tokens"], a["d_model"], device=device)).to(torch.float32),
        "weight": (1.0 + 0.1 * torch.randn(a["d_model"], device=device)).to(torch.float32),
        "bias": (0.1 * torch.randn(a["d_model"], device=device)).to(torch.float32),
    }


@torch.no_grad()
def run(hidden_states, weight, bias):
    layer_norm = torch.ops.aten.layer_norm.default(hidden_states, [1280], weight, bias, 1e-05, False)
    return layer_norm
