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


def _mxfp4_quantize(w):
    # Weights [..., K] -> e2m1 codes and e8m0 scales per 32: the OCP MX rule, shared exponent
    # floor(log2 amax) - 2 (emax of e2m1).
    shape = w.shape
    wb = w.reshape(*shape[:-1], shape[-1] // 32, 32)
    exponent = torch.floor(torch.log2(wb.abs().amax(dim=-1).clamp_min(2.0 ** -100))) - 2
    exponent = exponent.clamp(-127, 127)
    codes = _e2m1_codes(wb * torch.exp2(-exponent).unsqueeze(-1)).reshape(shape)
    return _pack_e2m1(codes), (exponent + 127).to(torch.uint8).view(torch.float8_e8m0fnu)


def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_rows"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    e = axes_and_scalars["num_local_experts"]
    blocks, scales = _mxfp4_quantize(torch.randn(e, n, k, device=device) * k ** -0.5)
    cuts = torch.sort(torch.randint(0, m + 1, (e - 1,), device=device)).values
    zero = torch.zeros(1, dtype=torch.int64, device=device)
    total = torch.full((1,), m, dtype=torch.int64, device=device)
    return {"hidden_states": torch.randn(m, k, device=device).to(torch.bfloat16), "w_blocks": blocks,
            "w_scales": scales, "bias": (0.1 * torch.randn(e, n, device=device)).to(torch.bfloat16),
            "expert_offsets": torch.cat([zero, cuts, total]).to(torch.int32)}


def _dequant(blocks, scales):
    values = _e2m1_values(blocks)
    n, k = values.shape
    return (values.reshape(n, k // 32, 32) * scales.to(torch.float32).unsqueeze(-1)).reshape(n, k)


@torch.no_grad()
def run(hidden_states, w_blocks, w_scales, bias, expert_offsets):
    bounds = expert_offsets.tolist()
    x = hidden_states.to(torch.float32)
    outs = []
    for e in range(w_blocks.shape[0]):
        start, end = bounds[e], bounds[e + 1]
        if end > start:
            w = _dequant(w_blocks[e], w_scales[e]).to(x.dtype)
            outs.append(x[start:end] @ w.T + bias[e].to(torch.float32))
    return torch.cat(outs, dim=0).to(hidden_states.dtype)
