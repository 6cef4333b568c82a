import torch

_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]  # AWQ packs columns 8j + _ORDER[i] into nibble i of int32 j


def _pack(values):
    # int [R, C] in 0..15 -> int32 [R, C / 8], AWQ nibble order.
    r, c = values.shape
    v = values.reshape(r, c // 8, 8)[:, :, _ORDER].to(torch.int64)
    shifts = torch.arange(0, 32, 4, device=values.device)
    packed = (v << shifts).sum(dim=-1)
    return torch.where(packed >= 2 ** 31, packed - 2 ** 32, packed).to(torch.int32)


def _unpack(packed):
    r, c8 = packed.shape
    shifts = torch.arange(0, 32, 4, device=packed.device, dtype=torch.int32)
    nibbles = (packed.unsqueeze(-1) >> shifts) & 15  # nibble i of each int32
    reverse = [0, 4, 1, 5, 2, 6, 3, 7]
    return nibbles[:, :, reverse].reshape(r, c8 * 8)


def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    g = k // 128
    return {"x": torch.randn(m, k, device=device).to(torch.float16),
            "qweight": _pack(torch.randint(0, 16, (k, n), device=device)),
            "qzeros": _pack(torch.randint(0, 16, (g, n), device=device)),
            "scales": (0.002 + 0.004 * torch.rand(g, n, device=device)).to(torch.float16)}


@torch.no_grad()
def run(x, qweight, qzeros, scales):
    k, n = qweight.shape[0], scales.shape[1]
    q = _unpack(qweight).reshape(k // 128, 128, n)
    z = _unpack(qzeros).unsqueeze(1)
    w = ((q - z).to(scales.dtype) * scales.unsqueeze(1)).reshape(k, n)
    return (x.to(torch.float32) @ w.to(torch.float32)).to(x.dtype)
