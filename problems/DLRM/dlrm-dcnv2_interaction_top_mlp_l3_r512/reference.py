import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    """Weights at their initial scale: each projection keeps unit-order activations through the layers."""
    a = axes_and_scalars
    batch, width = a["batch_size"], a["width"]
    out = {}
    if "num_sparse" in a:
        out["dense"] = torch.relu(torch.randn(batch, a["dim"], device=device))
        out["sparse"] = torch.randn(batch, a["num_sparse"], a["dim"], device=device) * 0.5
    else:
        out["x0"] = torch.randn(batch, width, device=device) * 0.5
    if "rank" in a:
        layers, rank = a["num_layers"], a["rank"]
        out["v_kernels"] = torch.randn(layers, rank, width, device=device) * width ** -0.5
        out["w_kernels"] = torch.randn(layers, width, rank, device=device) * (0.5 * rank ** -0.5)
        out["bias"] = torch.randn(layers, width, device=device) * 0.1
    else:
        out["weight"] = torch.randn(width, width, device=device) * (0.5 * width ** -0.5)
        out["bias"] = torch.randn(width, device=device) * 0.1
    top_sizes = (1024, 1024, 512, 256, 1)
    for index, size in enumerate(top_sizes):
        fan_in = width if index == 0 else top_sizes[index - 1]
        out[f"top_w{index}"] = torch.randn(size, fan_in, device=device) * (2.0 / fan_in) ** 0.5
        out[f"top_b{index}"] = torch.randn(size, device=device) * 0.1
    return out


def _low_rank_cross(x0, v_kernels, w_kernels, bias):
    """TorchRec LowRankCrossNet: x_{l+1} = x_0 * (W_l (V_l x_l) + b_l) + x_l."""
    x = x0
    for layer in range(v_kernels.shape[0]):
        x = x0 * F.linear(F.linear(x, v_kernels[layer]), w_kernels[layer], bias[layer]) + x
    return x


@torch.no_grad()
def run(dense, sparse, v_kernels, w_kernels, bias, top_w0, top_b0, top_w1, top_b1, top_w2, top_b2, top_w3, top_b3,
        top_w4, top_b4):
    x0 = torch.cat((dense.unsqueeze(1), sparse), dim=1).flatten(1)
    x = _low_rank_cross(x0, v_kernels, w_kernels, bias)
    top = [(top_w0, top_b0), (top_w1, top_b1), (top_w2, top_b2), (top_w3, top_b3), (top_w4, top_b4)]
    for index, (weight, b) in enumerate(top):
        x = F.linear(x, weight, b)
        if index < len(top) - 1:
            x = torch.relu(x)
    return x
