"""Quant: low-precision quantized operators as real serving and training stacks run them.

FP8 (e4m3 / e5m2) quantizers and scaled GEMMs (per-tensor, per-token x per-channel, DeepSeek-style
1x128 activation groups with 128x128 weight blocks), FP8 MoE grouped GEMMs, FP8 KV caches and
attention, NVFP4 (e2m1 codes, 16-element e4m3 block scales, a global fp32 scale), MXFP4 (e2m1 codes,
32-element e8m0 scales; gpt-oss experts), INT8 W8A8 (SmoothQuant) and INT4 weight-only (AWQ, GPTQ).

Every reference dequantizes explicitly and computes in fp32 (the golden run in fp64), so the SOL
layer counts each matmul at the rate of the precision its operands were dequantized from.
Quantized inputs come from ``make_inputs``: random data quantized as the serving stack would, so
codes are valid and scales positive. Quantizer outputs must match code for code (rounding is
round-to-nearest-even throughout; ``QUANTIZER_TOLERANCE``).
"""

from __future__ import annotations

from solbench.suite.catalog.models import model
from solbench.suite.catalog.shapes import grid, tokens
from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for

QUANTIZER_TOLERANCE = {"max_atol": 1e-6, "max_rtol": 1e-5, "required_matched_ratio": 0.999}
"""Codes compare value for value (1e-5 relative is far below one fp8/int8/fp4 step); 0.1% of elements
may flip where an fp32 quotient lands within one fp32 ulp of a rounding boundary. Scales (fp32) agree
to 1e-5 relative. A truncating or differently scaled quantizer moves most codes and fails."""
EXACT_FP4 = {"max_atol": 0.0, "max_rtol": 0.0, "required_matched_ratio": 1.0}
BF16 = tolerance_for("bfloat16")
FP16 = tolerance_for("float16")

# ------------------------------------------------------------------------------------------------
# Models (every value copied from model-configs.json)
DEEPSEEK_V3 = model("DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "language",
                    {"hidden_size": 7168, "q_lora_rank": 1536, "num_attention_heads": 128,
                     "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                     "published_quantization.fmt": "e4m3",
                     "published_quantization.weight_block_size": [128, 128],
                     "published_quantization.activation_scheme": "dynamic"})
DEEPSEEK_R1 = model("DeepSeek-R1", "deepseek-ai/DeepSeek-R1", "language",
                    {"hidden_size": 7168, "moe_intermediate_size": 2048,
                     "published_quantization.fmt": "e4m3",
                     "published_quantization.weight_block_size": [128, 128]})
DEEPSEEK_R1_FP4 = model("DeepSeek-R1", "deepseek-ai/DeepSeek-R1", "language", {"hidden_size": 7168})
KIMI_K2 = model("Kimi-K2-Instruct", "moonshotai/Kimi-K2-Instruct", "language",
                {"hidden_size": 7168, "intermediate_size": 18432,
                 "published_quantization.weight_block_size": [128, 128]})
QWEN3_235B = model("Qwen3-235B-A22B", "Qwen/Qwen3-235B-A22B", "language",
                   {"hidden_size": 4096, "moe_intermediate_size": 1536, "num_experts": 128})
QWEN3_30B = model("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", "language",
                  {"hidden_size": 2048, "moe_intermediate_size": 768, "num_experts": 128})
QWEN3_32B = model("Qwen3-32B", "Qwen/Qwen3-32B", "language", {"hidden_size": 5120, "rms_norm_eps": 1e-06})
MISTRAL_LARGE = model("Mistral-Large-Instruct-2411", "mistralai/Mistral-Large-Instruct-2411", "language",
                      {"hidden_size": 12288})
LLAMA_8B = model("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "language",
                 {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                  "derived.head_dim": 128})
LLAMA_8B_MLP = model("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "language",
                     {"hidden_size": 4096, "intermediate_size": 14336})
LLAMA_70B = model("Llama-3.1-70B", "meta-llama/Llama-3.1-70B", "language",
                  {"num_attention_heads": 64, "num_key_value_heads": 8, "derived.head_dim": 128})
LLAMA_70B_O = model("Llama-3.1-70B", "meta-llama/Llama-3.1-70B", "language",
                    {"hidden_size": 8192, "num_attention_heads": 64, "derived.head_dim": 128})
LLAMA4_MAVERICK = model("Llama-4-Maverick-17B-128E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
                        "language", {"hidden_size": 5120, "intermediate_size_mlp": 16384})
LLAMA4_MAVERICK_H = model("Llama-4-Maverick-17B-128E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
                          "language", {"hidden_size": 5120})
FLUX_DEV = model("FLUX.1-dev (transformer)", "black-forest-labs/FLUX.1-dev", "diffusion",
                 {"hidden_size": 3072, "num_heads": 24})
WAN_14B = model("Wan2.1-T2V-14B", "Wan-AI/Wan2.1-T2V-14B", "video", {"dim": 5120, "num_heads": 40})
GPT_OSS_120B = model("gpt-oss-120b", "openai/gpt-oss-120b", "language",
                     {"hidden_size": 2880, "intermediate_size": 2880, "num_experts": 128,
                      "published_quantization.quant_method": "mxfp4"})
GPT_OSS_20B = model("gpt-oss-20b", "openai/gpt-oss-20b", "language",
                    {"hidden_size": 2880, "intermediate_size": 2880,
                     "published_quantization.quant_method": "mxfp4"})
WHISPER_LARGE_V3 = model("Whisper large-v3", "openai/whisper-large-v3", "speech",
                         {"d_model": 1280, "encoder_ffn_dim": 5120, "max_source_positions": 1500})
VIT_L16 = model("ViT-L/16", "google/vit-large-patch16-224", "vision", {"hidden_size": 1024, "patch_size": 16})
QWEN25_7B = model("Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "language", {"hidden_size": 3584})
MISTRAL_7B = model("Mistral-7B-v0.1", "mistralai/Mistral-7B-v0.1", "language",
                   {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                    "derived.head_dim": 128})

# ------------------------------------------------------------------------------------------------
# Reference building blocks (pasted into the references that use them)
_FP8_GROUP_QUANT = '''

def _group_quant_fp8(x, group):
    """Per-group dynamic e4m3 quantization along the last dim: scale = max(amax, 1e-10) / 448."""
    shape = x.shape
    xg = x.to(torch.float32).reshape(*shape[:-1], shape[-1] // group, group)
    scale = xg.abs().amax(dim=-1).clamp_min(1e-10) / 448.0
    q = (xg / scale.unsqueeze(-1)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.reshape(shape), scale
'''

_FP8_BLOCK_QUANT = '''

def _block_quant_fp8(w, block=128):
    """128x128-block e4m3 weight quantization (DeepSeek-V3 checkpoints): w [..., N, K] -> codes, scales [..., N/128, K/128]."""
    *lead, n, k = w.shape
    wb = w.to(torch.float32).reshape(*lead, n // block, block, k // block, block)
    scale = wb.abs().amax(dim=(-3, -1)).clamp_min(1e-10) / 448.0
    q = (wb / scale[..., :, None, :, None]).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.reshape(w.shape), scale
'''

_FP8_BLOCK_DEQUANT = '''

def _dequant_groups(q, scale, group=128):
    """e4m3 codes [..., K] with fp32 scales [..., K/group] -> values (in the scales' precision)."""
    shape = q.shape
    values = q.to(torch.float32).reshape(*shape[:-1], shape[-1] // group, group) * scale.unsqueeze(-1)
    return values.reshape(shape)


def _dequant_blocks(q, scale, block=128):
    """e4m3 codes [..., N, K] with scales [..., N/128, K/128] -> values."""
    *lead, n, k = q.shape
    values = q.to(torch.float32).reshape(*lead, n // block, block, k // block, block) \\
        * scale[..., :, None, :, None]
    return values.reshape(q.shape)
'''

_FP4_TABLE = '''

def _e2m1_values(packed):
    """float4_e2m1fn_x2 [..., C/2] -> fp32 [..., C]: low nibble first; bit 3 is the sign."""
    table = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0],
                         dtype=torch.float32, device=packed.device)
    pairs = torch.stack([table.repeat(16), table.repeat_interleave(16)], dim=-1)  # byte -> (low, high)
    codes = packed.view(torch.uint8)
    values = torch.nn.functional.embedding(codes.reshape(-1).long(), pairs)
    return values.reshape(*codes.shape[:-1], codes.shape[-1] * 2)


def _e2m1_codes(v):
    """fp32 values (already scaled) -> 4-bit e2m1 codes, round-to-nearest-even, saturating at 6."""
    a = v.abs()
    magnitude = (a > 0.25).to(torch.uint8) + (a >= 0.75).to(torch.uint8) + (a > 1.25).to(torch.uint8) \\
        + (a >= 1.75).to(torch.uint8) + (a > 2.5).to(torch.uint8) + (a >= 3.5).to(torch.uint8) \\
        + (a > 5.0).to(torch.uint8)
    return magnitude | ((v < 0).to(torch.uint8) << 3)


def _pack_e2m1(codes):
    """uint8 codes [..., C] -> float4_e2m1fn_x2 [..., C/2], element 2i in the low nibble."""
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).view(torch.float4_e2m1fn_x2)
'''

_NVFP4_QUANT = '''

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
'''


def _slug(text: str) -> str:
    return text


def _var(description: str) -> dict:
    return {"type": "var", "description": description}


def _const(value: int, description: str) -> dict:
    return {"type": "const", "value": value, "description": description}


def _t(shape, dtype, description=None) -> dict:
    spec = {"shape": list(shape) if shape is not None else None, "dtype": dtype}
    if description:
        spec["description"] = description
    return spec


TOKENS = _var("Tokens in the batch (batch x sequence)")


# ================================================================================================
# FP8 quantizers
_GROUP_QUANT_REF = '''import torch
''' + _FP8_GROUP_QUANT + '''

def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    return {"hidden_states": torch.randn(t, h, device=device).to(torch.bfloat16)}


@torch.no_grad()
def run(hidden_states):
    return _group_quant_fp8(hidden_states, 128)
'''


def fp8_group_quant() -> ProblemDraft:
    m, h = DEEPSEEK_V3, 7168
    return ProblemDraft(
        set="Quant", name="deepseek_v3_fp8_act_quant_g128_h7168", op_type="quantize_fp8", model=m,
        description=("DeepSeek-V3 dynamic per-token-group FP8 activation quantization before every FP8 linear: "
                     "hidden_states [num_tokens, 7168] (hidden_size) in 1x128 groups (the activation tile of "
                     "published_quantization weight_block_size [128, 128], activation_scheme dynamic, fmt e4m3); "
                     "scale = max(amax, 1e-10) / 448 in fp32, codes = e4m3(clamp(x / scale, +-448)) rounded to "
                     "nearest even (sglang/vLLM per_token_group_quant_fp8, scales row-major)."),
        axes={"num_tokens": TOKENS, "hidden_size": _const(h, "hidden_size"),
              "num_groups": {"type": "expr", "expression": "hidden_size // 128",
                             "description": "1x128 quantization groups per token"}},
        inputs={"hidden_states": _t(["num_tokens", "hidden_size"], "bfloat16")},
        outputs={"x_fp8": _t(["num_tokens", "hidden_size"], "float8_e4m3fn"),
                 "x_scale": _t(["num_tokens", "num_groups"], "float32", "dequantized = x_fp8 * scale")},
        reference=_GROUP_QUANT_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 7, 32, 128, 255, 512, 1024, 2048)), tolerance=QUANTIZER_TOLERANCE)


_SILU_MUL_QUANT_REF = '''import torch
''' + _FP8_GROUP_QUANT + '''

def make_inputs(axes_and_scalars, device):
    t, i = axes_and_scalars["num_tokens"], axes_and_scalars["moe_intermediate_size"]
    return {"gate_up": torch.randn(t, 2 * i, device=device).to(torch.bfloat16)}


@torch.no_grad()
def run(gate_up):
    i = gate_up.shape[-1] // 2
    g = gate_up[..., :i].to(torch.float32)
    u = gate_up[..., i:].to(torch.float32)
    h = (g * torch.sigmoid(g) * u).to(gate_up.dtype)
    return _group_quant_fp8(h, 128)
'''


def fp8_silu_mul_quant() -> ProblemDraft:
    m, i = DEEPSEEK_R1, 2048
    return ProblemDraft(
        set="Quant", name="deepseek_r1_moe_silu_mul_fp8_quant_i2048", op_type="quantize_fp8", model=m,
        description=("DeepSeek-R1 routed-expert activation between the FP8 gate_up and down GEMMs, fused as in "
                     "sglang silu_and_mul + per_token_group_quant_fp8: gate_up [rows, 2 x 2048] "
                     "(moe_intermediate_size) -> silu(gate) * up rounded to bf16 -> 1x128-group e4m3 codes and "
                     "fp32 scales (max(amax, 1e-10) / 448; published_quantization fmt e4m3, weight_block_size "
                     "[128, 128]). Rows are (token, expert) pairs after routing."),
        axes={"num_tokens": _var("Routed (token, expert) rows"),
              "moe_intermediate_size": _const(i, "moe_intermediate_size"),
              "gate_up_size": {"type": "expr", "expression": "2 * moe_intermediate_size"},
              "num_groups": {"type": "expr", "expression": "moe_intermediate_size // 128"}},
        inputs={"gate_up": _t(["num_tokens", "gate_up_size"], "bfloat16", "gate then up halves")},
        outputs={"h_fp8": _t(["num_tokens", "moe_intermediate_size"], "float8_e4m3fn"),
                 "h_scale": _t(["num_tokens", "num_groups"], "float32")},
        reference=_SILU_MUL_QUANT_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((8, 64, 256, 500, 1000, 2048, 3072, 4096)), tolerance=QUANTIZER_TOLERANCE)


_PER_TOKEN_QUANT_REF = '''import torch


def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    return {"hidden_states": torch.randn(t, h, device=device).to(torch.bfloat16)}


@torch.no_grad()
def run(hidden_states):
    x = hidden_states.to(torch.float32)
    scale = (x.abs().amax(dim=-1, keepdim=True) / 448.0).clamp_min(1.0 / (448.0 * 512.0))
    q = (x / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q, scale
'''


def fp8_per_token_quant() -> ProblemDraft:
    m, h = MISTRAL_LARGE, 12288
    return ProblemDraft(
        set="Quant", name="mistral_large_2411_fp8_per_token_quant_h12288", op_type="quantize_fp8", model=m,
        description=("Mistral-Large-Instruct-2411 served in FP8 with dynamic per-token activation scales (vLLM "
                     "dynamic_per_token_scaled_fp8_quant): hidden_states [num_tokens, 12288] (hidden_size); "
                     "scale = max(amax / 448, 1 / (448 * 512)) per token in fp32, codes = e4m3(clamp(x / scale, "
                     "+-448)) rounded to nearest even."),
        axes={"num_tokens": TOKENS, "hidden_size": _const(h, "hidden_size"), "one": _const(1, "scale column")},
        inputs={"hidden_states": _t(["num_tokens", "hidden_size"], "bfloat16")},
        outputs={"x_fp8": _t(["num_tokens", "hidden_size"], "float8_e4m3fn"),
                 "x_scale": _t(["num_tokens", "one"], "float32")},
        reference=_PER_TOKEN_QUANT_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 5, 32, 128, 255, 512, 1024, 2048)), tolerance=QUANTIZER_TOLERANCE)


_RMSNORM_STATIC_QUANT_REF = '''import torch


def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    x = torch.randn(t, h, device=device).to(torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(h, device=device)).to(torch.bfloat16)
    scale = torch.rand(1, device=device) * 0.004 + 0.006  # calibrated static scale: max |y| / 448 ~ 4.5 / 448
    return {"hidden_states": x, "weight": weight, "scale": scale}


@torch.no_grad()
def run(hidden_states, weight, scale):
    x = hidden_states.to(torch.float32)
    y = (x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-06)).to(hidden_states.dtype) * weight
    return (y.to(torch.float32) / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
'''


def rmsnorm_static_fp8_quant() -> ProblemDraft:
    m, h = QWEN3_32B, 5120
    return ProblemDraft(
        set="Quant", name="qwen3_32b_rmsnorm_fp8_static_quant_h5120", op_type="quantize_fp8", model=m,
        description=("Qwen3-32B FP8 (static per-tensor activation scale) input RMSNorm fused with the quantization "
                     "that feeds the FP8 qkv/gate_up GEMMs (vLLM rms_norm_static_fp8_quant): RMSNorm over 5120 "
                     "(hidden_size), eps 1e-06 (rms_norm_eps), statistics in fp32, result rounded to bf16 and "
                     "times weight, then e4m3(clamp(y / scale, +-448)) with the calibrated fp32 scale."),
        axes={"num_tokens": TOKENS, "hidden_size": _const(h, "hidden_size"), "one": _const(1, "per-tensor")},
        inputs={"hidden_states": _t(["num_tokens", "hidden_size"], "bfloat16"),
                "weight": _t(["hidden_size"], "bfloat16"),
                "scale": _t(["one"], "float32", "static activation scale (dequantized = code * scale)")},
        outputs={"y_fp8": _t(["num_tokens", "hidden_size"], "float8_e4m3fn")},
        reference=_RMSNORM_STATIC_QUANT_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 7, 32, 128, 255, 512, 1024, 2048)),
        tolerance=QUANTIZER_TOLERANCE)


# ================================================================================================
# FP8 block-scaled GEMM (DeepSeek-V3 style)
_BLOCK_GEMM_REF = '''import torch
''' + _FP8_GROUP_QUANT + _FP8_BLOCK_QUANT + _FP8_BLOCK_DEQUANT + '''

def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    a, a_scale = _group_quant_fp8(torch.randn(m, k, device=device), 128)
    b, b_scale = _block_quant_fp8(torch.randn(n, k, device=device) * k ** -0.5, 128)
    return {"a": a, "a_scale": a_scale, "b": b, "b_scale": b_scale}


@torch.no_grad()
def run(a, a_scale, b, b_scale):
    out = _dequant_groups(a, a_scale) @ _dequant_blocks(b, b_scale).T
    return out.to(torch.bfloat16)
'''


def fp8_block_gemm(m, name: str, k: int, n: int, what: str, sweep) -> ProblemDraft:
    return ProblemDraft(
        set="Quant", name=name, op_type="gemm_fp8_block", model=m,
        description=(f"{m.name} FP8 block-scaled linear ({what}): out[M, {n}] = (a * a_scale) @ (b * b_scale)^T, "
                     f"K = {k}; a: e4m3 activations with one fp32 scale per 1x128 group along K, b: e4m3 weight "
                     f"[{n}, {k}] with one fp32 scale per 128x128 block (published_quantization weight_block_size "
                     "[128, 128]); fp32 accumulation, bf16 output (DeepGEMM gemm_fp8_fp8_bf16_nt semantics)."),
        axes={"num_tokens": TOKENS, "in_features": _const(k, "K"), "out_features": _const(n, "N"),
              "k_blocks": {"type": "expr", "expression": "in_features // 128"},
              "n_blocks": {"type": "expr", "expression": "out_features // 128"}},
        inputs={"a": _t(["num_tokens", "in_features"], "float8_e4m3fn"),
                "a_scale": _t(["num_tokens", "k_blocks"], "float32"),
                "b": _t(["out_features", "in_features"], "float8_e4m3fn"),
                "b_scale": _t(["n_blocks", "k_blocks"], "float32")},
        outputs={"out": _t(["num_tokens", "out_features"], "bfloat16")},
        reference=_BLOCK_GEMM_REF, custom_inputs_entrypoint="make_inputs", workloads=tokens(sweep), tolerance=BF16)


# ================================================================================================
# FP8 MoE grouped GEMM with block scales (contiguous layout: rows sorted by expert)
_MOE_BLOCK_REF = '''import torch
''' + _FP8_GROUP_QUANT + _FP8_BLOCK_QUANT + _FP8_BLOCK_DEQUANT + '''

def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_rows"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    e = axes_and_scalars["num_local_experts"]
    a, a_scale = _group_quant_fp8(torch.randn(m, k, device=device), 128)
    w, w_scale = _block_quant_fp8(torch.randn(e, n, k, device=device) * k ** -0.5, 128)
    # Routed rows per expert: a random split of num_rows (some experts may get none).
    cuts = torch.sort(torch.randint(0, m + 1, (e - 1,), device=device)).values
    zero = torch.zeros(1, dtype=torch.int64, device=device)
    total = torch.full((1,), m, dtype=torch.int64, device=device)
    expert_offsets = torch.cat([zero, cuts, total]).to(torch.int32)
    return {"a": a, "a_scale": a_scale, "w": w, "w_scale": w_scale, "expert_offsets": expert_offsets}


@torch.no_grad()
def run(a, a_scale, w, w_scale, expert_offsets):
    bounds = expert_offsets.tolist()
    a_values = _dequant_groups(a, a_scale)
    outs = []
    for e in range(w.shape[0]):
        start, end = bounds[e], bounds[e + 1]
        if end > start:
            outs.append(a_values[start:end] @ _dequant_blocks(w[e], w_scale[e]).T)
    return torch.cat(outs, dim=0).to(torch.bfloat16)
'''


def fp8_moe_block(m, name: str, k: int, n: int, experts: int, what: str, sweep) -> ProblemDraft:
    return ProblemDraft(
        set="Quant", name=name, op_type="moe_fp8_block", model=m,
        description=(f"{m.name} FP8 MoE grouped GEMM ({what}) in the contiguous layout of DeepGEMM "
                     "m_grouped_gemm_fp8_fp8_bf16_nt_contiguous: routed rows sorted by expert, expert e owns rows "
                     "[expert_offsets[e], expert_offsets[e+1]); out = (a * a_scale) @ (w[e] * w_scale[e])^T with "
                     f"1x128 activation groups and 128x128 weight blocks (e4m3, the FP8 checkpoint's "
                     f"weight_block_size [128, 128]); K = {k}, N = {n}, {experts} local experts; fp32 accumulation, "
                     "bf16 output."),
        axes={"num_rows": _var("Routed (token, expert) rows on this rank"),
              "num_local_experts": _const(experts, "experts held by this rank"),
              "num_offsets": {"type": "expr", "expression": "num_local_experts + 1"},
              "in_features": _const(k, "K"), "out_features": _const(n, "N"),
              "k_blocks": {"type": "expr", "expression": "in_features // 128"},
              "n_blocks": {"type": "expr", "expression": "out_features // 128"}},
        inputs={"a": _t(["num_rows", "in_features"], "float8_e4m3fn"),
                "a_scale": _t(["num_rows", "k_blocks"], "float32"),
                "w": _t(["num_local_experts", "out_features", "in_features"], "float8_e4m3fn"),
                "w_scale": _t(["num_local_experts", "n_blocks", "k_blocks"], "float32"),
                "expert_offsets": _t(["num_offsets"], "int32", "row offsets per expert, last = num_rows")},
        outputs={"out": _t(["num_rows", "out_features"], "bfloat16")},
        constraints=["num_rows == expert_offsets[-1].item()"],
        reference=_MOE_BLOCK_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens(sweep, axis="num_rows"), tolerance=BF16)


# ================================================================================================
# FP8 per-tensor and rowwise scaled GEMM
_PER_TENSOR_GEMM_REF = '''import torch


def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    x = torch.randn(m, k, device=device)
    w = torch.randn(n, k, device=device) * k ** -0.5
    a_scale = x.abs().amax().reshape(1) / 448.0 * (1.0 + torch.rand(1, device=device))  # calibrated, with headroom
    b_scale = w.abs().amax().reshape(1) / 448.0
    a = (x / a_scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    b = (w / b_scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return {"a": a, "a_scale": a_scale, "b": b, "b_scale": b_scale}


@torch.no_grad()
def run(a, a_scale, b, b_scale):
    out = (a.to(torch.float32) * a_scale) @ (b.to(torch.float32) * b_scale).T
    return out.to(torch.bfloat16)
'''


def fp8_per_tensor_gemm(m, name: str, k: int, n: int, what: str, sweep, axis_description=None) -> ProblemDraft:
    return ProblemDraft(
        set="Quant", name=name, op_type="gemm_fp8", model=m,
        description=(f"{m.name} FP8 linear with per-tensor scales ({what}): out[M, {n}] = (a * a_scale) @ "
                     f"(b * b_scale)^T, K = {k}; e4m3 activations and weight, one fp32 scale each (static, "
                     "calibrated: torch._scaled_mm / cutlass_scaled_mm semantics), fp32 accumulation, bf16 output."),
        axes={"num_tokens": _var(axis_description) if axis_description else TOKENS,
              "in_features": _const(k, "K"), "out_features": _const(n, "N"), "one": _const(1, "per-tensor")},
        inputs={"a": _t(["num_tokens", "in_features"], "float8_e4m3fn"), "a_scale": _t(["one"], "float32"),
                "b": _t(["out_features", "in_features"], "float8_e4m3fn"), "b_scale": _t(["one"], "float32")},
        outputs={"out": _t(["num_tokens", "out_features"], "bfloat16")},
        reference=_PER_TENSOR_GEMM_REF, custom_inputs_entrypoint="make_inputs", workloads=tokens(sweep),
        tolerance=BF16)


_ROWWISE_GEMM_REF = '''import torch


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
'''


def fp8_rowwise_gemm(m, name: str, k: int, n: int, what: str, sweep) -> ProblemDraft:
    return ProblemDraft(
        set="Quant", name=name, op_type="gemm_fp8", model=m,
        description=(f"{m.name} FP8 rowwise linear ({what}): out[M, {n}] = (a @ b^T) * a_scale * b_scale^T, "
                     f"K = {k}; e4m3 activations with one dynamic fp32 scale per token, e4m3 weight with one fp32 "
                     "scale per output channel (FBGEMM f8f8bf16_rowwise, the fbgemm_fp8 checkpoint format); fp32 "
                     "accumulation, bf16 output."),
        axes={"num_tokens": TOKENS, "in_features": _const(k, "K"), "out_features": _const(n, "N"),
              "one": _const(1, "scale column")},
        inputs={"a": _t(["num_tokens", "in_features"], "float8_e4m3fn"),
                "a_scale": _t(["num_tokens", "one"], "float32", "per token"),
                "b": _t(["out_features", "in_features"], "float8_e4m3fn"),
                "b_scale": _t(["out_features", "one"], "float32", "per output channel")},
        outputs={"out": _t(["num_tokens", "out_features"], "bfloat16")},
        reference=_ROWWISE_GEMM_REF, custom_inputs_entrypoint="make_inputs", workloads=tokens(sweep),
        tolerance=BF16)


def drafts() -> list[ProblemDraft]:
    return [
        fp8_group_quant(),
        fp8_silu_mul_quant(),
        fp8_per_token_quant(),
        rmsnorm_static_fp8_quant(),
        fp8_block_gemm(DEEPSEEK_V3, "deepseek_v3_fp8_block_gemm_q_a_proj", 7168, 1536,
                       "MLA q_a_proj: hidden_size 7168 -> q_lora_rank 1536", (1, 3, 16, 64, 100, 128, 255, 512, 1024)),
        fp8_block_gemm(KIMI_K2, "kimi_k2_fp8_block_gemm_down_proj_tp16", 1152, 7168,
                       "dense-layer down_proj, tensor-parallel shard TP=16: intermediate_size 18432 / 16 = 1152 -> "
                       "hidden_size 7168", (1, 3, 16, 64, 100, 128, 255, 512, 1024)),
        fp8_moe_block(QWEN3_235B, "qwen3_235b_a22b_fp8_moe_down_grouped_ep32", 1536, 4096, 4,
                      "routed-expert down_proj: moe_intermediate_size 1536 -> hidden_size 4096; Qwen3-235B-A22B-FP8 "
                      "with expert parallelism EP=32 (num_experts 128 / 32 = 4 experts per rank)",
                      (1, 4, 16, 64, 128, 200, 384, 512, 1024)),
        fp8_moe_block(QWEN3_30B, "qwen3_30b_a3b_fp8_moe_gate_up_grouped_ep16", 2048, 1536, 8,
                      "routed-expert fused gate_up: hidden_size 2048 -> 2 x moe_intermediate_size 768; "
                      "Qwen3-30B-A3B-FP8 with EP=16 (num_experts 128 / 16 = 8 experts per rank)",
                      (1, 8, 24, 64, 128, 300, 512, 1024, 2048)),
        fp8_per_tensor_gemm(LLAMA_8B, "llama31_8b_fp8_per_tensor_gemm_qkv_tp2", 4096, 3072,
                            "fused qkv_proj, TP=2 shard: hidden_size 4096 -> (32 + 2 x 8) / 2 heads x 128 = 3072, as in "
                            "the "
                            "Llama-3.1-8B-Instruct-FP8 checkpoints", (1, 2, 16, 64, 128, 255, 512, 1000)),
        fp8_per_tensor_gemm(FLUX_DEV, "flux1_dev_fp8_per_tensor_gemm_attn_proj", 3072, 3072,
                            "image-stream attention output projection hidden_size 3072 -> 3072 (24 heads x 128) of "
                            "a double-stream block, FP8 e4m3 checkpoint", (256, 512, 576, 1024, 1296, 1536, 2048, 2304),
                            axis_description="Image tokens: batch x (H/16) x (W/16) latent patches"),
        fp8_rowwise_gemm(LLAMA_70B_O, "llama31_70b_fp8_rowwise_gemm_o_proj_tp8", 1024, 8192,
                         "o_proj, tensor-parallel shard TP=8: num_attention_heads 64 / 8 x head_dim 128 = 1024 -> "
                         "hidden_size 8192; per-token dynamic activations and per-channel weights as in the "
                         "Meta-Llama-3.1-70B-Instruct-FP8-dynamic checkpoints", (1, 2, 8, 32, 64, 100, 255, 512, 1024)),
        fp8_rowwise_gemm(LLAMA4_MAVERICK, "llama4_maverick_fp8_rowwise_gemm_down_proj_tp8", 2048, 5120,
                         "dense-layer down_proj, TP=8 shard: intermediate_size_mlp 16384 / 8 = 2048 -> hidden_size "
                         "5120; the Llama-4-Maverick-17B-128E-Instruct-FP8 release",
                         (1, 4, 16, 64, 128, 255, 512, 1024)),
    ]
