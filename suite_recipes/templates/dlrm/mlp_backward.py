import torch
import torch.nn.functional as F


SIZES = __SIZES__
LAST_RELU = __LAST_RELU__


def make_inputs(axes_and_scalars, device):
    """Kaiming-scaled weights (std sqrt(2 / fan_in)), as ReLU MLPs are initialised."""
    a = axes_and_scalars
    out = {"x": __X__}
    for index in range(len(SIZES) - 1):
        out[f"w{index}"] = torch.randn(SIZES[index + 1], SIZES[index], device=device) * (2.0 / SIZES[index]) ** 0.5
        out[f"b{index}"] = torch.randn(SIZES[index + 1], device=device) * 0.1
    __EXTRA__
    return out


def _mlp(x, params):
    layers = len(params) // 2
    for index in range(layers):
        x = F.linear(x, params[2 * index], params[2 * index + 1])
        if index < layers - 1 or LAST_RELU:
            x = torch.relu(x)
    return x


def run(x, __PARAMS__, grad_output):
    __LAST_BIAS__
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (__GRADS__)]
        out = _mlp(__X_LEAF__, leaves__PARAM_SLICE__)
        return torch.autograd.grad(out, leaves, grad_output)
