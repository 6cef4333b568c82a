import torch


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["num_tokens"], a["hidden_size"], device=device)).to(torch.bfloat16),
        "gate_proj_weight": (torch.randn(a["intermediate_size"], a["hidden_size"], device=device) * 0.015625).to(torch.bfloat16),
        "up_proj_weight": (torch.randn(a["intermediate_size"], a["hidden_size"], device=device) * 0.015625).to(torch.bfloat16),
        "down_proj_weight": (torch.randn(a["hidden_size"], a["intermediate_size"], device=device) * 0.023622779563076703).to(torch.bfloat16),
    }


@torch.no_grad()
def run(hidden_states, gate_proj_weight, up_proj_weight, down_proj_weight):
    linear = torch.ops.aten.linear.default(hidden_states, gate_proj_weight)
    silu = torch.ops.aten.silu.default(linear)
    linear_1 = torch.ops.aten.linear.default(hidden_states, up_proj_weight)
    mul = torch.ops.aten.mul.Tensor(silu, linear_1)
    linear_2 = torch.ops.aten.linear.default(mul, down_proj_weight)
    return linear_2
