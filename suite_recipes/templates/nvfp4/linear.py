import torch
import torch.nn.functional as F

E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
"""The value of each 4-bit code: bit 3 is the sign."""


def _acc(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def _fp4_values(packed, dtype):
    """float4_e2m1fn_x2 [..., C/2] -> [..., C] in dtype (exact): the low nibble is element 2i."""
    codes = packed.view(torch.uint8)
    table = torch.tensor(E2M1, dtype=dtype, device=packed.device)
    low, high = table[(codes & 0x0F).long()], table[(codes >> 4).long()]
    return torch.stack((low, high), dim=-1).reshape(*codes.shape[:-1], codes.shape[-1] * 2)


def _dequant(packed, sf, dtype):
    """Codes times their 16-element block's E4M3 scale (the per-tensor scale is applied by the caller)."""
    values = _fp4_values(packed, dtype)
    shape = values.shape
    blocks = values.reshape(*shape[:-1], shape[-1] // 16, 16) * sf.to(dtype).unsqueeze(-1)
    return blocks.reshape(shape)


def _e2m1_codes(v):
    """fp32 values (already scaled) -> 4-bit codes, round-to-nearest-even, saturating at 6."""
    a = v.abs()
    magnitude = (a > 0.25).to(torch.uint8) + (a >= 0.75).to(torch.uint8) + (a > 1.25).to(torch.uint8) \
        + (a >= 1.75).to(torch.uint8) + (a > 2.5).to(torch.uint8) + (a >= 3.5).to(torch.uint8) \
        + (a > 5.0).to(torch.uint8)
    return magnitude | ((v < 0).to(torch.uint8) << 3)


def _quantize(x, input_scale):
    """fp4_quantize with the encode scale gs = 1 / input_scale: per 16 elements sf = e4m3(gs * amax / 6)
    (clamped to 448), codes = e2m1(x * (1 / (sf / gs))); linear scale layout."""
    shape = x.shape
    xb = x.to(torch.float32).reshape(*shape[:-1], shape[-1] // 16, 16)
    gs = 1.0 / input_scale.to(torch.float32)
    sf = (gs * (xb.abs().amax(dim=-1) / 6.0)).clamp(max=448.0).to(torch.float8_e4m3fn)
    sf_values = sf.to(torch.float32)
    inverse = torch.where(sf_values != 0, 1.0 / (sf_values / gs), torch.zeros_like(sf_values))
    codes = _e2m1_codes(xb * inverse.unsqueeze(-1)).reshape(shape)
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).view(torch.float4_e2m1fn_x2), sf


def _linear(x, input_scale, weight, weight_scale, weight_scale_2):
    """An NVFP4 linear layer: quantise x, then alpha * (a x a_sf) @ (w x w_sf)^T, accumulated in fp32
    (fp64 in the golden run)."""
    acc = _acc(x)
    a, a_sf = _quantize(x, input_scale)
    product = _dequant(a, a_sf, acc) @ _dequant(weight, weight_scale, acc).transpose(-1, -2)
    return product * (input_scale.to(acc) * weight_scale_2.to(acc))


def _random_weight(shape, std, device):
    """Codes, block scales and weight_scale_2 of an NVFP4 weight [..., N, K] drawn directly: uniform codes
    (RMS 2.93), block scales uniform in [64, 448] (RMS 279), weight_scale_2 within a factor 2 of
    std / (2.93 x 279), so the dequantised weight has std ~ std."""
    *lead, rows, cols = shape
    codes = torch.randint(0, 256, (*lead, rows, cols // 2), dtype=torch.uint8, device=device)
    sf = (torch.rand(*lead, rows, cols // 16, device=device) * 384.0 + 64.0).to(torch.float8_e4m3fn)
    scale_2 = (std / (2.93 * 279.0)) * torch.exp2(torch.rand(*(lead or [1]), device=device) * 2.0 - 1.0)
    return codes.view(torch.float4_e2m1fn_x2), sf, scale_2


def _static_scale(amax, device):
    """A calibrated per-tensor decode scale amax / (6 * 448), amax observed within [amax, 1.5 amax]."""
    return (amax / (6.0 * 448.0)) * (1.0 + 0.5 * torch.rand(1, device=device))
__SPLIT__

def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    t, k, n = a["num_tokens"], a["in_features"], a["out_features"]
    weight, weight_scale, weight_scale_2 = _random_weight((n, k), k ** -0.5, device)
    out = {"x": torch.randn(t, k, device=device).to(torch.bfloat16), "input_scale": _static_scale(8.0, device),
           "weight": weight, "weight_scale": weight_scale, "weight_scale_2": weight_scale_2}
    __EXTRA__
    return out


@torch.no_grad()
def run(x, input_scale, weight, weight_scale, weight_scale_2__EXTRA_ARGS__):
    y = _linear(x, input_scale, weight, weight_scale, weight_scale_2)
    __RETURN__
