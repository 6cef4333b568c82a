import torch


def run(grad_output, gate, up):
    compute = torch.promote_types(gate.dtype, torch.float32)
    dy, g, u = grad_output.to(compute), gate.to(compute), up.to(compute)
    sigmoid = torch.sigmoid(g)
    silu = g * sigmoid
    grad_gate = dy * u * sigmoid * (1.0 + g * (1.0 - sigmoid))
    return grad_gate.to(gate.dtype), (dy * silu).to(up.dtype)
