import torch


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["num_tokens"], a["hidden_size"], device=device)).to(torch.bfloat16),
        "gate_up_proj_weight": (torch.randn(a["gate_up_intermediate_size"], a["hidden_size"], device=device) * 0.018042195912175804).to(torch.bfloat16),
        "down_proj_weight": (torch.randn(a["hidden_size"], a["intermediate_size"], device=device) * 0.02209708691207961).to(torch.bfloat16),
    }


@torch.no_grad()
def run(hidden_states, gate_up_proj_weight, down_proj_weight):
    linear = torch.ops.aten.linear.default(hidden_states, gate_up_proj_weight)
    chunk = torch.ops.aten.chunk.default(linear, 2, -1)
    getitem = chunk[0]
    getitem_1 = chunk[1]
    silu = torch.ops.aten.silu.default(getitem)
    mul = torch.ops.aten.mul.Tensor(getitem_1, silu)
    linear_1 = torch.ops.aten.linear.default(mul, down_proj_weight)
    return linear_1
