import torch


def _pack_rows(values):
    # int [R, C] in 0..15 -> int32 [R / 8, C]: value of row 8i + j in nibble j (GPTQ qweight).
    r, c = values.shape
    v = values.reshape(r // 8, 8, c).to(torch.int64)
    shifts = torch.arange(0, 32, 4, device=values.device).reshape(1, 8, 1)
    packed = (v << shifts).sum(dim=1)
    return torch.where(packed >= 2 ** 31, packed - 2 ** 32, packed).to(torch.int32)


def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    g = k // 128
    zeros = torch.randint(0, 15, (g, n), device=device)  # stored zero - 1 (GPTQ v1 checkpoints)
    return {"x": torch.randn(m, k, device=device).to(torch.float16),
            "qweight": _pack_rows(torch.randint(0, 16, (k, n), device=device)),
            "qzeros": _pack_rows(zeros.T.contiguous()).T.contiguous(),
            "scales": (0.002 + 0.004 * torch.rand(g, n, device=device)).to(torch.float16)}


@torch.no_grad()
def run(x, qweight, qzeros, scales):
    shifts = torch.arange(0, 32, 4, device=qweight.device, dtype=torch.int32)
    k8, n = qweight.shape
    q = ((qweight.unsqueeze(1) >> shifts.reshape(1, 8, 1)) & 15).reshape(k8 * 8, n)
    g = qzeros.shape[0]
    z = ((qzeros.unsqueeze(-1) >> shifts) & 15).reshape(g, n) + 1
    w = ((q.reshape(g, -1, n) - z.unsqueeze(1)).to(scales.dtype) * scales.unsqueeze(1)).reshape(k8 * 8, n)
    return (x.to(torch.float32) @ w.to(torch.float32)).to(x.dtype)
