import torch


def _e2m1_values(packed):
    """float4_e2m1fn_x2 [..., C/2] -> fp32 [..., C]: low nibble first; bit 3 is the sign."""
    table = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0],
                         dtype=torch.float32, device=packed.device)
    pairs = torch.stack([table.repeat(16), table.repeat_interleave(16)], dim=-1)  # byte -> (low, high)
    codes = packed.view(torch.uint8)
    values = torch.nn.functional.embedding(codes.reshape(-1).long(), pairs)
    return values.reshape(*codes.shape[:-1], codes.shape[-1] * 2)


def _e2m1_codes(v):
    """fp32 values (already scaled) -> 4-bit codes, round-to-nearest-even, saturating at 6."""
    a = v.abs()
    magnitude = (a > 0.25).to(torch.uint8) + (a >= 0.75).to(torch.uint8) + (a > 1.25).to(torch.uint8) \
        + (a >= 1.75).to(torch.uint8) + (a > 2.5).to(torch.uint8) + (a >= 3.5).to(torch.uint8) \
        + (a > 5.0).to(torch.uint8)
    return magnitude | ((v < 0).to(torch.uint8) << 3)


def _pack_e2m1(codes):
    """uint8 codes [..., C] -> float4_e2m1fn_x2 [..., C/2], element 2i in the low nibble."""
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).view(torch.float4_e2m1fn_x2)


def _nvfp4_quantize(x, global_scale):
    """NVFP4: per 16 elements an e4m3 scale sf = e4m3(global_scale * amax / 6); codes of
    x * (1 / (sf / global_scale)), round-to-nearest-even (TensorRT-LLM / FlashInfer fp4_quantize)."""
    shape = x.shape
    xb = x.to(torch.float32).reshape(*shape[:-1], shape[-1] // 16, 16)
    amax = xb.abs().amax(dim=-1)
    sf = (global_scale * (amax / 6.0)).clamp(max=448.0).to(torch.float8_e4m3fn)
    sf_values = sf.to(torch.float32)
    inverse = torch.where(sf_values != 0, 1.0 / (sf_values / global_scale), torch.zeros_like(sf_values))
    codes = _e2m1_codes(xb * inverse.unsqueeze(-1)).reshape(shape)
    return _pack_e2m1(codes), sf


def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    x = torch.randn(m, k, device=device)
    w = torch.randn(n, k, device=device) * k ** -0.5
    gs_a = (448.0 * 6.0 / x.abs().amax()).reshape(1)
    gs_b = (448.0 * 6.0 / w.abs().amax()).reshape(1)
    a, a_sf = _nvfp4_quantize(x, gs_a)
    b, b_sf = _nvfp4_quantize(w, gs_b)
    return {"a": a, "a_sf": a_sf, "b": b, "b_sf": b_sf, "alpha": 1.0 / (gs_a * gs_b)}


def _dequant(codes, sf):
    values = _e2m1_values(codes)
    rows, cols = values.shape
    return (values.reshape(rows, cols // 16, 16) * sf.to(torch.float32).unsqueeze(-1)).reshape(rows, cols)


@torch.no_grad()
def run(a, a_sf, b, b_sf, alpha):
    out = (_dequant(a, a_sf) @ _dequant(b, b_sf).T) * alpha
    return out.to(torch.bfloat16)
