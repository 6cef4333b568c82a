import math

import torch


def run(grad_output, gate, up):
    compute = torch.promote_types(gate.dtype, torch.float32)
    dy, g, u = grad_output.to(compute), gate.to(compute), up.to(compute)
    k = math.sqrt(2.0 / math.pi)
    t = torch.tanh(k * (g + 0.044715 * g * g * g))
    gelu = 0.5 * g * (1.0 + t)
    d_gelu = 0.5 * (1.0 + t) + 0.5 * g * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * g * g)
    return (dy * u * d_gelu).to(gate.dtype), (dy * gelu).to(up.dtype)
