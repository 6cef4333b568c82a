import torch


def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    x = torch.randn(m, k, device=device)
    # Layers differ in weight magnitude; without that spread every draw's b_scale is the same to within
    # the tolerance and a kernel could hard-code it.
    w = torch.randn(n, k, device=device) * k ** -0.5 * (0.5 + 1.5 * torch.rand(1, device=device))
    a_scale = x.abs().amax().reshape(1) / 448.0 * (1.0 + torch.rand(1, device=device))  # calibrated, with headroom
    b_scale = w.abs().amax().reshape(1) / 448.0
    a = (x / a_scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    b = (w / b_scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return {"a": a, "a_scale": a_scale, "b": b, "b_scale": b_scale}


@torch.no_grad()
def run(a, a_scale, b, b_scale):
    out = (a.to(torch.float32) * a_scale) @ (b.to(torch.float32) * b_scale).T
    return out.to(torch.bfloat16)
