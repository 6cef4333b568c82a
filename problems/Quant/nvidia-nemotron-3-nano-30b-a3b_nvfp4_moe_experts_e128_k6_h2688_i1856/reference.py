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

GATED = False


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    t, h, i, k = a["num_tokens"], a["hidden_size"], a["intermediate_size"], a["top_k"]
    experts, local = a["num_experts"], a["num_local_experts"]
    fc1_rows = 2 * i if GATED else i
    w1, w1_scale, w1_scale_2 = _random_weight((local, fc1_rows, h), h ** -0.5, device)
    w2, w2_scale, w2_scale_2 = _random_weight((local, h, i), i ** -0.5, device)
    # k distinct experts per token from integers only (no ties): a random start plus k increasing steps, mod E
    steps = torch.randint(1, experts // k + 1, (t, k), device=device)
    start = torch.randint(0, experts, (t, 1), device=device)
    topk_ids = ((start + torch.cumsum(steps, dim=1)) % experts).to(torch.int32)
    # A busy rank: three tokens in four send a random slot to one of this rank's experts (unless one is there
    # already), so which tokens reach the rank, and with which slot's weight, follows topk_ids
    hot = torch.randint(0, local, (t, 1), device=device).to(torch.int32)
    slot = torch.randint(0, k, (t, 1), device=device)
    busy = torch.rand(t, 1, device=device) < 0.75
    busy[0] = True  # a workload of one token still reaches the rank
    present = (topk_ids < local).any(dim=1, keepdim=True)
    topk_ids.scatter_(1, slot, torch.where(busy & ~present, hot, topk_ids.gather(1, slot)))
    weights = (torch.rand(t, k, device=device) + 0.1).sort(dim=1, descending=True).values  # a router's order
    return {"hidden_states": torch.randn(t, h, device=device).to(torch.bfloat16), "topk_ids": topk_ids,
            "topk_weights": weights / weights.sum(dim=1, keepdim=True),
            "fc1_input_scale": _static_scale(8.0, device), "fc1_weight": w1, "fc1_weight_scale": w1_scale,
            "fc1_weight_scale_2": w1_scale_2, "fc2_input_scale": _static_scale(16.0, device), "fc2_weight": w2,
            "fc2_weight_scale": w2_scale, "fc2_weight_scale_2": w2_scale_2}


@torch.no_grad()
def run(hidden_states, topk_ids, topk_weights, fc1_input_scale, fc1_weight, fc1_weight_scale, fc1_weight_scale_2,
        fc2_input_scale, fc2_weight, fc2_weight_scale, fc2_weight_scale_2):
    """This rank holds experts 0 .. num_local_experts-1; (token, slot) pairs routed elsewhere are skipped.
    The routed rows are sorted by expert and each GEMM is one grouped GEMM: dequantised NVFP4 values (code x
    block scale) are exact in bf16, the products accumulate in fp32, the result is bf16, then x alpha."""
    dt, f32, b16 = hidden_states.dtype, torch.float32, torch.bfloat16
    local = fc1_weight.shape[0]
    a, a_sf = _quantize(hidden_states, fc1_input_scale)
    token, slot = torch.nonzero(topk_ids < local, as_tuple=True)
    expert = topk_ids[token, slot].long()
    order = torch.argsort(expert, stable=True)
    token, slot, expert = token[order], slot[order], expert[order]
    offsets = torch.cumsum(torch.bincount(expert, minlength=local), 0).to(torch.int32)
    x = _dequant(a, a_sf, f32)[token].to(b16)
    w1 = _dequant(fc1_weight, fc1_weight_scale, f32).to(b16)
    alpha1 = fc1_input_scale.to(f32) * fc1_weight_scale_2.to(f32)[expert]
    h = (torch._grouped_mm(x, w1.transpose(-1, -2), offs=offsets).to(f32) * alpha1.unsqueeze(1)).to(dt).to(f32)
    if GATED:
        half = h.shape[-1] // 2
        act = F.silu(h[:, :half]) * h[:, half:]
    else:
        act = torch.relu(h).square()
    q, q_sf = _quantize(act, fc2_input_scale)
    w2 = _dequant(fc2_weight, fc2_weight_scale, f32).to(b16)
    alpha2 = fc2_input_scale.to(f32) * fc2_weight_scale_2.to(f32)[expert]
    y = torch._grouped_mm(_dequant(q, q_sf, f32).to(b16), w2.transpose(-1, -2), offs=offsets)
    y = (y.to(f32) * alpha2.unsqueeze(1)).to(dt)
    out = torch.zeros(hidden_states.shape, dtype=f32, device=hidden_states.device)
    out.index_add_(0, token, y.to(f32) * topk_weights[token, slot].to(f32).unsqueeze(1))
    return out.to(dt)
