import torch


def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    return {"grad_output": torch.randn(t, h, device=device).to(torch.bfloat16)}


def run(grad_output):
    g = grad_output.to(torch.float32)
    scale = 57344.0 / g.abs().amax().clamp_min(1e-12)
    q = (g * scale).clamp(-57344.0, 57344.0).to(torch.float8_e5m2)
    return q, q.T.contiguous(), (1.0 / scale).reshape(1)
