import torch


def make_inputs(axes, device):
    m, n, k = axes["M"], axes["N"], axes["K"]
    x = torch.randn(m, k, device=device)
    w = torch.randn(n, k, device=device) * k ** -0.5
    a_scale = x.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 448.0
    b_scale = w.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 448.0
    return {"A": (x / a_scale).clamp(-448, 448).to(torch.float8_e4m3fn), "A_scale": a_scale,
            "B": (w / b_scale).clamp(-448, 448).to(torch.float8_e4m3fn), "B_scale": b_scale}


@torch.no_grad()
def run(A, A_scale, B, B_scale):
    acc = torch.promote_types(A_scale.dtype, torch.float32)
    out = (A.to(acc) @ B.to(acc).T) * A_scale.to(acc) * B_scale.to(acc).T
    return out.to(torch.bfloat16)
