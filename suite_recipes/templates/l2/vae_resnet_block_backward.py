import math

import torch
import torch.nn.functional as F


__MAKE_INPUTS__


def run(x, norm1_weight, norm1_bias, conv1_weight, conv1_bias, norm2_weight, norm2_bias, conv2_weight,
        grad_output):
    # conv2's bias enters no gradient but its own (the sum of grad_output), so it is not an input
    conv2_bias = torch.zeros(conv2_weight.shape[0], dtype=x.dtype, device=x.device)
    with torch.enable_grad():
        params = [t.detach().requires_grad_() for t in (x, norm1_weight, norm1_bias, conv1_weight, conv1_bias,
                                                         norm2_weight, norm2_bias, conv2_weight, conv2_bias)]
        xx, n1w, n1b, c1w, c1b, n2w, n2b, c2w, c2b = params
        h = F.conv2d(F.silu(F.group_norm(xx, 32, n1w, n1b, 1e-06)), c1w, c1b, padding=1)
        h = F.conv2d(F.silu(F.group_norm(h, 32, n2w, n2b, 1e-06)), c2w, c2b, padding=1)
        return torch.autograd.grad(xx + h, params, grad_output)
