import torch


def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    x = torch.randn(m, k, device=device)
    w = torch.randn(n, k, device=device) * k ** -0.5
    a_scale = (x.abs().amax(dim=1, keepdim=True) / 127.0).clamp_min(1e-12)
    w_scale = (w.abs().amax(dim=1, keepdim=True) / 127.0).clamp_min(1e-12)
    a = torch.round(x / a_scale).clamp(-128, 127).to(torch.int8)
    b = torch.round(w / w_scale).clamp(-128, 127).to(torch.int8)
    bias = (0.1 * torch.randn(n, device=device)).to(torch.bfloat16)
    return {"a": a, "a_scale": a_scale, "b": b, "b_scale": w_scale, "bias": bias}


@torch.no_grad()
def run(a, a_scale, b, b_scale, bias):
    acc = a.to(torch.float32) @ b.to(torch.float32).T  # exact int32 products, fp32 sums
    return (acc * a_scale * b_scale.T + bias.to(torch.float32)).to(torch.bfloat16)
