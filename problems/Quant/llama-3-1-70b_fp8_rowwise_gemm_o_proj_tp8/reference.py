import torch


def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    x = torch.randn(m, k, device=device)
    w = torch.randn(n, k, device=device) * k ** -0.5
    a_scale = (x.abs().amax(dim=1, keepdim=True) / 448.0).clamp_min(1e-12)
    b_scale = (w.abs().amax(dim=1, keepdim=True) / 448.0).clamp_min(1e-12)
    a = (x / a_scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    b = (w / b_scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return {"a": a, "a_scale": a_scale, "b": b, "b_scale": b_scale}


@torch.no_grad()
def run(a, a_scale, b, b_scale):
    out = (a.to(torch.float32) @ b.to(torch.float32).T) * a_scale * b_scale.T
    return out.to(torch.bfloat16)
