import torch


def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    x = torch.randn(t, h, device=device).to(torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(h, device=device)).to(torch.bfloat16)
    scale = torch.rand(1, device=device) * 0.004 + 0.006  # calibrated static scale: max |y| / 448 ~ 4.5 / 448
    return {"hidden_states": x, "weight": weight, "scale": scale}


@torch.no_grad()
def run(hidden_states, weight, scale):
    x = hidden_states.to(torch.float32)
    y = (x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-06)).to(hidden_states.dtype) * weight
    return (y.to(torch.float32) / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
