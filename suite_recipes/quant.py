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

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads per problem (serving steps of 1-64k
tokens, 128k for the narrow layers; decode over 1k-32k-token contexts; Wan2.1 clips at 480p and 720p; Whisper's
1,500-frame clips; ViT-L's 197-token images; training micro-batches of 512-64k tokens), ``workload.cpu.jsonl`` the
recipes' small ones. The FP8 KV-cache append returns the rows it writes, not the cache. Quant is forward only
(as upstream's): the three FP8 training problems (linear backward, blockwise linear backward, grad
cast-transpose) are built here but belong to set L1.
"""

from __future__ import annotations

from suite_recipes.builder import const, problem, tensor, var
from suite_recipes.models import model
from suite_recipes.shapes import grid, tokens
from suite_recipes.sweeps import with_gpu_tier
from suite_recipes.snippets import E2M1_CODES
from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for

QUANTIZER_TOLERANCE = {"max_atol": 1e-12, "max_rtol": 1e-5, "required_matched_ratio": 0.999}
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
QWEN25_7B = model("Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "language",
                  {"hidden_size": 3584, "num_key_value_heads": 4, "derived.head_dim": 128})
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


''' + E2M1_CODES + '''

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


TOKENS = var("Tokens in the batch (batch x sequence)")


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
    return problem(
        set="Quant", name="deepseek_v3_fp8_act_quant_g128_h7168", op_type="quantize_fp8", model=m,
        description=("DeepSeek-V3 dynamic per-token-group FP8 activation quantization before every FP8 linear: "
                     "hidden_states [num_tokens, 7168] (hidden_size) in 1x128 groups (the activation tile of "
                     "published_quantization weight_block_size [128, 128], activation_scheme dynamic, fmt e4m3); "
                     "scale = max(amax, 1e-10) / 448 in fp32, codes = e4m3(clamp(x / scale, +-448)) rounded to "
                     "nearest even (sglang/vLLM per_token_group_quant_fp8, scales row-major)."),
        axes={"num_tokens": TOKENS, "hidden_size": const(h, "hidden_size"),
              "num_groups": {"type": "expr", "expression": "hidden_size // 128",
                             "description": "1x128 quantization groups per token"}},
        inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], "bfloat16")},
        outputs={"x_fp8": tensor(["num_tokens", "hidden_size"], "float8_e4m3fn"),
                 "x_scale": tensor(["num_tokens", "num_groups"], "float32", "dequantized = x_fp8 * scale")},
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
    return problem(
        set="Quant", name="deepseek_r1_moe_silu_mul_fp8_quant_i2048", op_type="quantize_fp8", model=m,
        description=("DeepSeek-R1 routed-expert activation between the FP8 gate_up and down GEMMs, fused as in "
                     "sglang silu_and_mul + per_token_group_quant_fp8: gate_up [rows, 2 x 2048] "
                     "(moe_intermediate_size) -> silu(gate) * up rounded to bf16 -> 1x128-group e4m3 codes and "
                     "fp32 scales (max(amax, 1e-10) / 448; published_quantization fmt e4m3, weight_block_size "
                     "[128, 128]). Rows are (token, expert) pairs after routing."),
        axes={"num_tokens": var("Routed (token, expert) rows"),
              "moe_intermediate_size": const(i, "moe_intermediate_size"),
              "gate_up_size": {"type": "expr", "expression": "2 * moe_intermediate_size"},
              "num_groups": {"type": "expr", "expression": "moe_intermediate_size // 128"}},
        inputs={"gate_up": tensor(["num_tokens", "gate_up_size"], "bfloat16", "gate then up halves")},
        outputs={"h_fp8": tensor(["num_tokens", "moe_intermediate_size"], "float8_e4m3fn"),
                 "h_scale": tensor(["num_tokens", "num_groups"], "float32")},
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
    return problem(
        set="Quant", name="mistral_large_2411_fp8_per_token_quant_h12288", op_type="quantize_fp8", model=m,
        description=("Mistral-Large-Instruct-2411 served in FP8 with dynamic per-token activation scales (vLLM "
                     "dynamic_per_token_scaled_fp8_quant): hidden_states [num_tokens, 12288] (hidden_size); "
                     "scale = max(amax / 448, 1 / (448 * 512)) per token in fp32, codes = e4m3(clamp(x / scale, "
                     "+-448)) rounded to nearest even."),
        axes={"num_tokens": TOKENS, "hidden_size": const(h, "hidden_size"), "one": const(1, "scale column")},
        inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], "bfloat16")},
        outputs={"x_fp8": tensor(["num_tokens", "hidden_size"], "float8_e4m3fn"),
                 "x_scale": tensor(["num_tokens", "one"], "float32")},
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
    return problem(
        set="Quant", name="qwen3_32b_rmsnorm_fp8_static_quant_h5120", op_type="quantize_fp8", model=m,
        description=("Qwen3-32B FP8 (static per-tensor activation scale) input RMSNorm fused with the quantization "
                     "that feeds the FP8 qkv/gate_up GEMMs (vLLM rms_norm_static_fp8_quant): RMSNorm over 5120 "
                     "(hidden_size), eps 1e-06 (rms_norm_eps), statistics in fp32, result rounded to bf16 and "
                     "times weight, then e4m3(clamp(y / scale, +-448)) with the calibrated fp32 scale."),
        axes={"num_tokens": TOKENS, "hidden_size": const(h, "hidden_size"), "one": const(1, "per-tensor")},
        inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], "bfloat16"),
                "weight": tensor(["hidden_size"], "bfloat16"),
                "scale": tensor(["one"], "float32", "static activation scale (dequantized = code * scale)")},
        outputs={"y_fp8": tensor(["num_tokens", "hidden_size"], "float8_e4m3fn")},
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
    return problem(
        set="Quant", name=name, op_type="gemm_fp8_block", model=m,
        description=(f"{m.name} FP8 block-scaled linear ({what}): out[M, {n}] = (a * a_scale) @ (b * b_scale)^T, "
                     f"K = {k}; a: e4m3 activations with one fp32 scale per 1x128 group along K, b: e4m3 weight "
                     f"[{n}, {k}] with one fp32 scale per 128x128 block (published_quantization weight_block_size "
                     "[128, 128]); fp32 accumulation, bf16 output (DeepGEMM gemm_fp8_fp8_bf16_nt semantics)."),
        axes={"num_tokens": TOKENS, "in_features": const(k, "K"), "out_features": const(n, "N"),
              "k_blocks": {"type": "expr", "expression": "in_features // 128"},
              "n_blocks": {"type": "expr", "expression": "out_features // 128"}},
        inputs={"a": tensor(["num_tokens", "in_features"], "float8_e4m3fn"),
                "a_scale": tensor(["num_tokens", "k_blocks"], "float32"),
                "b": tensor(["out_features", "in_features"], "float8_e4m3fn"),
                "b_scale": tensor(["n_blocks", "k_blocks"], "float32")},
        outputs={"out": tensor(["num_tokens", "out_features"], "bfloat16")},
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
    return problem(
        set="Quant", name=name, op_type="moe_fp8_block", model=m,
        description=(f"{m.name} FP8 MoE grouped GEMM ({what}) in the contiguous layout of DeepGEMM "
                     "m_grouped_gemm_fp8_fp8_bf16_nt_contiguous: routed rows sorted by expert, expert e owns rows "
                     "[expert_offsets[e], expert_offsets[e+1]); out = (a * a_scale) @ (w[e] * w_scale[e])^T with "
                     f"1x128 activation groups and 128x128 weight blocks (e4m3, the FP8 checkpoint's "
                     f"weight_block_size [128, 128]); K = {k}, N = {n}, {experts} local experts; fp32 accumulation, "
                     "bf16 output."),
        axes={"num_rows": var("Routed (token, expert) rows on this rank"),
              "num_local_experts": const(experts, "experts held by this rank"),
              "num_offsets": {"type": "expr", "expression": "num_local_experts + 1"},
              "in_features": const(k, "K"), "out_features": const(n, "N"),
              "k_blocks": {"type": "expr", "expression": "in_features // 128"},
              "n_blocks": {"type": "expr", "expression": "out_features // 128"}},
        inputs={"a": tensor(["num_rows", "in_features"], "float8_e4m3fn"),
                "a_scale": tensor(["num_rows", "k_blocks"], "float32"),
                "w": tensor(["num_local_experts", "out_features", "in_features"], "float8_e4m3fn"),
                "w_scale": tensor(["num_local_experts", "n_blocks", "k_blocks"], "float32"),
                "expert_offsets": tensor(["num_offsets"], "int32", "row offsets per expert, last = num_rows")},
        outputs={"out": tensor(["num_rows", "out_features"], "bfloat16")},
        constraints=["num_rows == expert_offsets[-1].item()"],
        reference=_MOE_BLOCK_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens(sweep, axis="num_rows"), tolerance=BF16)


# ================================================================================================
# FP8 per-tensor and rowwise scaled GEMM
_PER_TENSOR_GEMM_REF = '''import torch


def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    x = torch.randn(m, k, device=device)
    # Layers differ in weight magnitude; without that spread every draw's b_scale is the same to within
    # the tolerance and a kernel could hard-code it.
    w = torch.randn(n, k, device=device) * k ** -0.5 * (0.5 + 1.5 * torch.rand(1, device=device))
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
    return problem(
        set="Quant", name=name, op_type="gemm_fp8", model=m,
        description=(f"{m.name} FP8 linear with per-tensor scales ({what}): out[M, {n}] = (a * a_scale) @ "
                     f"(b * b_scale)^T, K = {k}; e4m3 activations and weight, one fp32 scale each (static, "
                     "calibrated: torch._scaled_mm / cutlass_scaled_mm semantics), fp32 accumulation, bf16 output."),
        axes={"num_tokens": var(axis_description) if axis_description else TOKENS,
              "in_features": const(k, "K"), "out_features": const(n, "N"), "one": const(1, "per-tensor")},
        inputs={"a": tensor(["num_tokens", "in_features"], "float8_e4m3fn"), "a_scale": tensor(["one"], "float32"),
                "b": tensor(["out_features", "in_features"], "float8_e4m3fn"), "b_scale": tensor(["one"], "float32")},
        outputs={"out": tensor(["num_tokens", "out_features"], "bfloat16")},
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
    return problem(
        set="Quant", name=name, op_type="gemm_fp8", model=m,
        description=(f"{m.name} FP8 rowwise linear ({what}): out[M, {n}] = (a @ b^T) * a_scale * b_scale^T, "
                     f"K = {k}; e4m3 activations with one dynamic fp32 scale per token, e4m3 weight with one fp32 "
                     "scale per output channel (FBGEMM f8f8bf16_rowwise, the fbgemm_fp8 checkpoint format); fp32 "
                     "accumulation, bf16 output."),
        axes={"num_tokens": TOKENS, "in_features": const(k, "K"), "out_features": const(n, "N"),
              "one": const(1, "scale column")},
        inputs={"a": tensor(["num_tokens", "in_features"], "float8_e4m3fn"),
                "a_scale": tensor(["num_tokens", "one"], "float32", "per token"),
                "b": tensor(["out_features", "in_features"], "float8_e4m3fn"),
                "b_scale": tensor(["out_features", "one"], "float32", "per output channel")},
        outputs={"out": tensor(["num_tokens", "out_features"], "bfloat16")},
        reference=_ROWWISE_GEMM_REF, custom_inputs_entrypoint="make_inputs", workloads=tokens(sweep),
        tolerance=BF16)


# ================================================================================================
# NVFP4, MXFP4, MXFP8
_NVFP4_QUANT_REF = """import torch
""" + _FP4_TABLE + _NVFP4_QUANT + """

def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    x = torch.randn(t, h, device=device).to(torch.bfloat16)
    # Calibrated per-tensor global scale: 448 * 6 / amax, amax observed with some headroom.
    global_scale = (448.0 * 6.0 / (x.float().abs().amax() * (1.0 + torch.rand((), device=device)))).reshape(1)
    return {"hidden_states": x, "global_scale": global_scale}


@torch.no_grad()
def run(hidden_states, global_scale):
    return _nvfp4_quantize(hidden_states, global_scale)
"""


def nvfp4_quantize() -> ProblemDraft:
    m, h = DEEPSEEK_R1_FP4, 7168
    return problem(
        set="Quant", name="deepseek_r1_nvfp4_act_quant_h7168", op_type="quantize_fp4", model=m,
        description=("DeepSeek-R1 served in NVFP4 (NVIDIA's DeepSeek-R1-FP4 checkpoint): activation quantization "
                     "of hidden_states [num_tokens, 7168] (hidden_size) before the FP4 expert GEMMs. Per 16 "
                     "elements: sf = e4m3(global_scale * amax / 6) (clamped to 448, round-to-nearest-even); codes "
                     "= e2m1(x * (1 / (sf / global_scale))) with round-to-nearest-even and saturation at 6, two per "
                     "byte, element 2i in the low nibble (FlashInfer / TensorRT-LLM fp4_quantize; scales in linear, "
                     "not swizzled, layout). Codes and scales must match exactly."),
        axes={"num_tokens": TOKENS, "hidden_size": const(h, "hidden_size"),
              "packed_size": {"type": "expr", "expression": "hidden_size // 2"},
              "num_blocks": {"type": "expr", "expression": "hidden_size // 16"}, "one": const(1, "per-tensor")},
        inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], "bfloat16"),
                "global_scale": tensor(["one"], "float32", "448 * 6 / calibrated amax")},
        outputs={"x_fp4": tensor(["num_tokens", "packed_size"], "float4_e2m1fn_x2"),
                 "x_sf": tensor(["num_tokens", "num_blocks"], "float8_e4m3fn", "block scales")},
        reference=_NVFP4_QUANT_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 3, 8, 32, 64, 100, 128, 256)), tolerance=EXACT_FP4)


_NVFP4_GEMM_REF = """import torch
""" + _FP4_TABLE + _NVFP4_QUANT + """

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
"""


def nvfp4_gemm() -> ProblemDraft:
    m, k, n = LLAMA_8B, 4096, 1024
    return problem(
        set="Quant", name="llama31_8b_nvfp4_gemm_k_proj", op_type="gemm_fp4", model=m,
        description=("Llama-3.1-8B in NVFP4 (NVIDIA's Llama-3.1-8B-Instruct-FP4): k_proj, hidden_size 4096 -> "
                     "num_key_value_heads 8 x head_dim 128 = 1024. a and b are e2m1 codes packed two per byte (low "
                     "nibble first) with one e4m3 scale per 16 elements along K; out = alpha * (a * a_sf) @ "
                     "(b * b_sf)^T with alpha = 1 / (global_scale_a * global_scale_b); fp32 accumulation, bf16 "
                     "output (cutlass_scaled_fp4_mm / FlashInfer mm_fp4 semantics, linear scale layout)."),
        axes={"num_tokens": TOKENS, "in_features": const(k, "K"), "out_features": const(n, "N"),
              "k_packed": {"type": "expr", "expression": "in_features // 2"},
              "k_blocks": {"type": "expr", "expression": "in_features // 16"}, "one": const(1, "per-tensor")},
        inputs={"a": tensor(["num_tokens", "k_packed"], "float4_e2m1fn_x2"),
                "a_sf": tensor(["num_tokens", "k_blocks"], "float8_e4m3fn"),
                "b": tensor(["out_features", "k_packed"], "float4_e2m1fn_x2"),
                "b_sf": tensor(["out_features", "k_blocks"], "float8_e4m3fn"),
                "alpha": tensor(["one"], "float32")},
        outputs={"out": tensor(["num_tokens", "out_features"], "bfloat16")},
        reference=_NVFP4_GEMM_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 3, 16, 64, 100, 255, 512, 768)), tolerance=BF16)


_MXFP4_MOE_REF = """import torch
""" + _FP4_TABLE + """

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
"""


def mxfp4_moe() -> ProblemDraft:
    m, k, n, experts = GPT_OSS_120B, 2880, 2880, 2
    return problem(
        set="Quant", name="gpt_oss_120b_mxfp4_moe_down_grouped_ep64", op_type="moe_mxfp4", model=m,
        description=("gpt-oss-120b MoE expert down projection with MXFP4 weights (published_quantization "
                     "quant_method mxfp4): intermediate_size 2880 -> hidden_size 2880 per expert, wide expert "
                     "parallelism EP=64 (num_experts 128 / 64 = 2 experts per rank), contiguous layout: routed rows sorted by "
                     "expert, expert e owns rows [expert_offsets[e], expert_offsets[e+1]). Weights are e2m1 codes "
                     "packed two per byte (low nibble first, the checkpoint's *_blocks) with one e8m0 scale per 32 "
                     "elements along K (*_scales); bf16 activations, per-expert bf16 bias, fp32 accumulation, bf16 "
                     "output."),
        axes={"num_rows": var("Routed (token, expert) rows on this rank"),
              "num_local_experts": const(experts, "experts held by this rank"),
              "num_offsets": {"type": "expr", "expression": "num_local_experts + 1"},
              "in_features": const(k, "intermediate_size"), "out_features": const(n, "hidden_size"),
              "k_packed": {"type": "expr", "expression": "in_features // 2"},
              "k_blocks": {"type": "expr", "expression": "in_features // 32"}},
        inputs={"hidden_states": tensor(["num_rows", "in_features"], "bfloat16"),
                "w_blocks": tensor(["num_local_experts", "out_features", "k_packed"], "float4_e2m1fn_x2"),
                "w_scales": tensor(["num_local_experts", "out_features", "k_blocks"], "float8_e8m0fnu"),
                "bias": tensor(["num_local_experts", "out_features"], "bfloat16"),
                "expert_offsets": tensor(["num_offsets"], "int32", "row offsets per expert, last = num_rows")},
        outputs={"out": tensor(["num_rows", "out_features"], "bfloat16")},
        constraints=["num_rows == expert_offsets[-1].item()"],
        reference=_MXFP4_MOE_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 4, 16, 64, 128, 200, 384, 512), axis="num_rows"), tolerance=BF16)


_MXFP8_QUANT_REF = """import torch


def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    return {"hidden_states": torch.randn(t, h, device=device).to(torch.bfloat16)}


@torch.no_grad()
def run(hidden_states):
    t, h = hidden_states.shape
    x = hidden_states.to(torch.float32).reshape(t, h // 32, 32)
    ratio = (x.abs().amax(dim=-1) / 448.0).clamp_min(2.0 ** -126)
    bits = ratio.view(torch.int32)
    # e8m0 exponent = ceil(log2(amax / 448)), read exactly from the fp32 bits.
    exponent = ((bits >> 23) & 0xFF) - 127 + ((bits & 0x7FFFFF) != 0).to(torch.int32)
    inverse = ((127 - exponent) << 23).view(torch.float32)  # 2^-exponent, exact
    q = (x * inverse.unsqueeze(-1)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).reshape(t, h)
    return q, (exponent + 127).to(torch.uint8).view(torch.float8_e8m0fnu)
"""


def mxfp8_quantize() -> ProblemDraft:
    m, h = GPT_OSS_20B, 2880
    return problem(
        set="Quant", name="gpt_oss_20b_mxfp8_act_quant_h2880", op_type="quantize_mxfp8", model=m,
        description=("gpt-oss-20b on Blackwell: the bf16 activations entering the MXFP4 expert GEMMs (published_"
                     "quantization quant_method mxfp4) are quantized to MXFP8 (FlashInfer mxfp8_quantize): per 32 "
                     "elements of hidden_states [num_tokens, 2880] (hidden_size) an e8m0 scale 2^ceil(log2(amax / "
                     "448)) and e4m3 codes of x / scale, round-to-nearest-even (linear scale layout)."),
        axes={"num_tokens": TOKENS, "hidden_size": const(h, "hidden_size"),
              "num_blocks": {"type": "expr", "expression": "hidden_size // 32"}},
        inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], "bfloat16")},
        outputs={"x_fp8": tensor(["num_tokens", "hidden_size"], "float8_e4m3fn"),
                 "x_scale": tensor(["num_tokens", "num_blocks"], "float8_e8m0fnu")},
        reference=_MXFP8_QUANT_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 4, 32, 128, 255, 512, 1024, 2048)), tolerance=QUANTIZER_TOLERANCE)


# ================================================================================================
# INT8 (SmoothQuant W8A8) and INT4 weight-only (AWQ, GPTQ)
_W8A8_REF = """import torch


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
"""


def int8_w8a8_gemm() -> ProblemDraft:
    m, k, n = WHISPER_LARGE_V3, 1280, 5120
    return problem(
        set="Quant", name="whisper_large_v3_int8_w8a8_gemm_fc1", op_type="gemm_int8", model=m,
        description=("Whisper large-v3 fc1 (d_model 1280 -> encoder_ffn_dim 5120) in SmoothQuant W8A8 INT8: out = "
                     "(a @ b^T) * a_scale * b_scale^T + bias, int8 activations with one dynamic fp32 scale per "
                     "token, int8 weight with one fp32 scale per output channel, int32 accumulation, bf16 bias and "
                     "output (vLLM cutlass_scaled_mm). Token counts run from decoder steps (batched beams) to "
                     "encoder chunks of up to half a 30 s window (max_source_positions 1500 frames)."),
        axes={"num_tokens": TOKENS, "in_features": const(k, "d_model"), "out_features": const(n, "encoder_ffn_dim"),
              "one": const(1, "scale column")},
        inputs={"a": tensor(["num_tokens", "in_features"], "int8"),
                "a_scale": tensor(["num_tokens", "one"], "float32", "per token"),
                "b": tensor(["out_features", "in_features"], "int8"),
                "b_scale": tensor(["out_features", "one"], "float32", "per output channel"),
                "bias": tensor(["out_features"], "bfloat16")},
        outputs={"out": tensor(["num_tokens", "out_features"], "bfloat16")},
        reference=_W8A8_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 5, 20, 64, 100, 256, 448, 750)), tolerance=BF16)


_LN_INT8_QUANT_REF = """import torch


def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    return {"hidden_states": torch.randn(t, h, device=device).to(torch.bfloat16),
            "weight": (1.0 + 0.1 * torch.randn(h, device=device)).to(torch.bfloat16),
            "bias": (0.1 * torch.randn(h, device=device)).to(torch.bfloat16),
            "smooth": (0.5 + torch.rand(h, device=device)).to(torch.float32)}


@torch.no_grad()
def run(hidden_states, weight, bias, smooth):
    x = hidden_states.to(torch.float32)
    mean = x.mean(dim=-1, keepdim=True)
    var = (x - mean).pow(2).mean(dim=-1, keepdim=True)
    y = ((x - mean) * torch.rsqrt(var + 1e-06) * weight.to(torch.float32) + bias.to(torch.float32)) / smooth
    amax = y.abs().amax(dim=-1, keepdim=True).clamp_min(1e-10)
    q = torch.round(y * (127.0 / amax)).clamp(-128, 127).to(torch.int8)
    return q, amax / 127.0
"""


def layernorm_int8_quant() -> ProblemDraft:
    m, h = VIT_L16, 1024
    return problem(
        set="Quant", name="vit_l16_layernorm_int8_smoothquant_h1024", op_type="quantize_int8", model=m,
        description=("ViT-L/16 pre-LN block input in SmoothQuant W8A8 INT8 serving: LayerNorm over 1024 "
                     "(hidden_size, eps 1e-6 as in the flax implementation), divided by the per-channel smoothing "
                     "factor, then dynamic per-token int8 quantization: codes = round_half_even(y * 127 / amax) "
                     "clamped to [-128, 127], scale = amax / 127. Tokens: batch x 197 (14 x 14 patches of "
                     "patch_size 16 on 224 px, plus the class token)."),
        axes={"num_tokens": var("batch x 197 tokens"), "hidden_size": const(h, "hidden_size"),
              "one": const(1, "scale column")},
        inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], "bfloat16"),
                "weight": tensor(["hidden_size"], "bfloat16"), "bias": tensor(["hidden_size"], "bfloat16"),
                "smooth": tensor(["hidden_size"], "float32", "SmoothQuant per-channel smoothing factors")},
        outputs={"x_int8": tensor(["num_tokens", "hidden_size"], "int8"),
                 "x_scale": tensor(["num_tokens", "one"], "float32")},
        reference=_LN_INT8_QUANT_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens(tuple(197 * b for b in (1, 2, 3, 4, 5, 8, 12, 16))), tolerance=QUANTIZER_TOLERANCE)


_AWQ_REF = """import torch

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
"""


def awq_int4_gemm() -> ProblemDraft:
    m, k, n = QWEN25_7B, 3584, 512
    return problem(
        set="Quant", name="qwen25_7b_awq_int4_gemm_k_proj", op_type="gemm_int4", model=m,
        description=("Qwen2.5-7B-Instruct-AWQ k_proj (hidden_size 3584 -> num_key_value_heads 4 x head_dim 128 = "
                     "512): 4-bit weight-only GEMM, AWQ GEMM "
                     "format: qweight int32 [K, N / 8] with eight 4-bit values per int32 in AWQ's interleaved "
                     "order (columns 8j + [0, 2, 4, 6, 1, 3, 5, 7] in nibbles 0..7), qzeros int32 [K / 128, N / 8] "
                     "packed the same way, fp16 scales [K / 128, N]; w = (q - z) * scale per group of 128 along K "
                     "(rounded to fp16 as the dequant kernel does), out = x @ w with fp32 accumulation, fp16 output."),
        axes={"num_tokens": TOKENS, "in_features": const(k, "hidden_size"), "out_features": const(n, "kv width"),
              "n_packed": {"type": "expr", "expression": "out_features // 8"},
              "num_groups": {"type": "expr", "expression": "in_features // 128"}},
        inputs={"x": tensor(["num_tokens", "in_features"], "float16"),
                "qweight": tensor(["in_features", "n_packed"], "int32"),
                "qzeros": tensor(["num_groups", "n_packed"], "int32"),
                "scales": tensor(["num_groups", "out_features"], "float16")},
        outputs={"out": tensor(["num_tokens", "out_features"], "float16")},
        reference=_AWQ_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 2, 8, 16, 64, 128, 255, 512, 1024)), tolerance=FP16)


_GPTQ_REF = """import torch


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
"""


def gptq_int4_gemm() -> ProblemDraft:
    m, k, n = MISTRAL_7B, 4096, 1024
    return problem(
        set="Quant", name="mistral_7b_gptq_int4_gemm_k_proj", op_type="gemm_int4", model=m,
        description=("Mistral-7B-v0.1 GPTQ (4-bit, group size 128, desc_act off) k_proj: hidden_size 4096 -> "
                     "num_key_value_heads 8 x head_dim 128 = 1024. qweight int32 [K / 8, N] holds rows 8i..8i+7 "
                     "in nibbles 0..7; qzeros int32 [K / 128, N / 8] holds columns 8j..8j+7, stored minus one (v1 "
                     "checkpoints: the kernel adds 1); fp16 scales [K / 128, N]; w = (q - z) * scale rounded to "
                     "fp16, out = x @ w with fp32 accumulation, fp16 output (exllama / Marlin semantics)."),
        axes={"num_tokens": TOKENS, "in_features": const(k, "hidden_size"), "out_features": const(n, "kv width"),
              "k_packed": {"type": "expr", "expression": "in_features // 8"},
              "n_packed": {"type": "expr", "expression": "out_features // 8"},
              "num_groups": {"type": "expr", "expression": "in_features // 128"}},
        inputs={"x": tensor(["num_tokens", "in_features"], "float16"),
                "qweight": tensor(["k_packed", "out_features"], "int32"),
                "qzeros": tensor(["num_groups", "n_packed"], "int32"),
                "scales": tensor(["num_groups", "out_features"], "float16")},
        outputs={"out": tensor(["num_tokens", "out_features"], "float16")},
        reference=_GPTQ_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 2, 8, 16, 64, 128, 255, 512, 1024)), tolerance=FP16)

# ================================================================================================
# FP8 KV cache and attention
_KV_APPEND_REF = """import torch


def make_inputs(axes_and_scalars, device):
    t, h, d = axes_and_scalars["num_tokens"], axes_and_scalars["num_kv_heads"], axes_and_scalars["head_dim"]
    # Log-uniform over 16x: per-tensor scales differ between models and layers, and a kernel must not
    # get away with a hard-coded one.
    k_scale = 0.005 * 2.0 ** (4 * torch.rand(1, device=device))
    v_scale = 0.005 * 2.0 ** (4 * torch.rand(1, device=device))
    return {"key": torch.randn(t, h, d, device=device).to(torch.bfloat16),
            "value": torch.randn(t, h, d, device=device).to(torch.bfloat16),
            "k_scale": k_scale, "v_scale": v_scale}


@torch.no_grad()
def run(key, value, k_scale, v_scale):
    k_new = (key.to(torch.float32) / k_scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    v_new = (value.to(torch.float32) / v_scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return k_new, v_new
"""


def fp8_kv_append() -> ProblemDraft:
    m = LLAMA_8B
    return problem(
        set="Quant", name="llama31_8b_fp8_kv_cache_append", op_type="kv_cache_fp8", model=m,
        description=("Llama-3.1-8B with an FP8 KV cache (vLLM kv_cache_dtype fp8_e4m3, reshape_and_cache_flash): "
                     "the step's key/value [num_tokens, 8, 128] (num_key_value_heads x head_dim) are divided by the "
                     "per-tensor k_scale / v_scale and rounded to e4m3 (nearest even, clamped to +-448). The outputs "
                     "are the cache rows this step writes, in token order: a kernel writes them at its slots; a "
                     "problem that returned the whole updated cache would time a copy of the cache, hundreds of "
                     "times the append."),
        axes={"num_tokens": var("New tokens this step"), "num_kv_heads": const(8, "num_key_value_heads"),
              "head_dim": const(128, "derived.head_dim"), "one": const(1, "per-tensor")},
        inputs={"key": tensor(["num_tokens", "num_kv_heads", "head_dim"], "bfloat16"),
                "value": tensor(["num_tokens", "num_kv_heads", "head_dim"], "bfloat16"),
                "k_scale": tensor(["one"], "float32"), "v_scale": tensor(["one"], "float32")},
        outputs={"key_rows": tensor(["num_tokens", "num_kv_heads", "head_dim"], "float8_e4m3fn"),
                 "value_rows": tensor(["num_tokens", "num_kv_heads", "head_dim"], "float8_e4m3fn")},
        reference=_KV_APPEND_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 8, 32, 64, 255, 512, 1024, 2048)),
        # Every code must match up to one e4m3 step (rtol 1/8, a flip at a rounding tie): the outputs are all
        # written values now, but a kernel must still not drop some of them.
        tolerance={"max_atol": 1e-12, "max_rtol": 0.13, "required_matched_ratio": 1.0})


_DECODE_FP8_KV_REF = """import torch


def make_inputs(axes_and_scalars, device):
    b, s = axes_and_scalars["batch_size"], axes_and_scalars["kv_len"]
    hq, hk, d = axes_and_scalars["num_heads"], axes_and_scalars["num_kv_heads"], axes_and_scalars["head_dim"]
    k_scale = (0.01 + 0.01 * torch.rand(1, device=device))
    v_scale = (0.01 + 0.01 * torch.rand(1, device=device))
    k = (torch.randn(b, s, hk, d, device=device) / k_scale).clamp(-448, 448).to(torch.float8_e4m3fn)
    v = (torch.randn(b, s, hk, d, device=device) / v_scale).clamp(-448, 448).to(torch.float8_e4m3fn)
    # Query scale 3: peaked attention, as trained models have (uniform weights would average V to ~0).
    return {"q": (3.0 * torch.randn(b, hq, d, device=device)).to(torch.bfloat16), "k_cache": k, "v_cache": v,
            "k_scale": k_scale, "v_scale": v_scale}


@torch.no_grad()
def run(q, k_cache, v_cache, k_scale, v_scale):
    b, hq, d = q.shape
    hk = k_cache.shape[2]
    k = (k_cache.to(torch.float32) * k_scale).permute(0, 2, 3, 1)  # [b, hk, d, s]
    v = (v_cache.to(torch.float32) * v_scale).permute(0, 2, 1, 3)  # [b, hk, s, d]
    qg = q.to(k.dtype).reshape(b, hk, hq // hk, d)
    p = torch.softmax(torch.matmul(qg, k) * d ** -0.5, dim=-1)
    return torch.matmul(p, v).reshape(b, hq, d).to(q.dtype)
"""


def fp8_kv_decode_attention() -> ProblemDraft:
    m = MISTRAL_7B
    return problem(
        set="Quant", name="mistral_7b_fp8_kv_decode_attention", op_type="attention_fp8", model=m,
        description=("Mistral-7B-v0.1 decode attention over an FP8 e4m3 KV cache with per-tensor k_scale / "
                     "v_scale (vLLM kv_cache_dtype fp8): one query token per sequence, num_attention_heads 32 "
                     "sharing num_key_value_heads 8 (GQA), head_dim 128; K and V dequantized as code * scale, "
                     "softmax(q k^T / sqrt(128)) v in fp32, bf16 output. Every sequence holds kv_len tokens."),
        axes={"batch_size": var("Sequences decoding"), "kv_len": var("Cached tokens per sequence"),
              "num_heads": const(32, "num_attention_heads"), "num_kv_heads": const(8, "num_key_value_heads"),
              "head_dim": const(128, "derived.head_dim"), "one": const(1, "per-tensor")},
        inputs={"q": tensor(["batch_size", "num_heads", "head_dim"], "bfloat16"),
                "k_cache": tensor(["batch_size", "kv_len", "num_kv_heads", "head_dim"], "float8_e4m3fn"),
                "v_cache": tensor(["batch_size", "kv_len", "num_kv_heads", "head_dim"], "float8_e4m3fn"),
                "k_scale": tensor(["one"], "float32"), "v_scale": tensor(["one"], "float32")},
        outputs={"out": tensor(["batch_size", "num_heads", "head_dim"], "bfloat16")},
        reference=_DECODE_FP8_KV_REF, custom_inputs_entrypoint="make_inputs",
        workloads=grid(batch_size=(1, 1, 4, 8, 16, 32, 64, 2), kv_len=(512, 4096, 1000, 1024, 512, 255, 128, 2000)),
        tolerance=BF16)


_FP8_ATTENTION_REF = """import torch


def _quant(x):
    # FP8 e4m3 with one scale per (batch, head): descale = amax / 448
    descale = x.abs().amax(dim=(-2, -1)) / 448.0
    q = (x / descale[..., None, None]).clamp(-448, 448).to(torch.float8_e4m3fn)
    return q, descale


def make_inputs(axes_and_scalars, device):
    b, h, s, d = (axes_and_scalars[k] for k in ("batch_size", "num_heads", "seq_len", "head_dim"))
    q, q_descale = _quant(3.0 * torch.randn(b, h, s, d, device=device))  # peaked attention
    k, k_descale = _quant(torch.randn(b, h, s, d, device=device))
    v, v_descale = _quant(torch.randn(b, h, s, d, device=device))
    return {"q": q, "k": k, "v": v, "q_descale": q_descale, "k_descale": k_descale, "v_descale": v_descale}


@torch.no_grad()
def run(q, k, v, q_descale, k_descale, v_descale):
    qf = q.to(torch.float32) * q_descale[..., None, None]
    kf = k.to(torch.float32) * k_descale[..., None, None]
    vf = v.to(torch.float32) * v_descale[..., None, None]
    return torch.nn.functional.scaled_dot_product_attention(qf, kf, vf).to(torch.bfloat16)
"""


def fp8_attention() -> ProblemDraft:
    m = WAN_14B
    return problem(
        set="Quant", name="wan21_t2v_14b_fp8_attention_sp8", op_type="attention_fp8", model=m,
        description=("Wan2.1-T2V-14B full (non-causal) 3D self-attention with FP8 e4m3 q/k/v, one descale per "
                     "(batch, head) as in FlashAttention-3 FP8 (q_descale, k_descale, v_descale); num_heads 40 "
                     "split by Ulysses sequence parallelism over 8 GPUs = 5 heads per rank, head_dim 128 (dim 5120 "
                     "/ 40); softmax(q k^T / sqrt(128)) v in fp32, bf16 output. seq_len = latent frames x (H/16) x "
                     "(W/16) for short, low-resolution clips (e.g. 1 x 30 x 52 = 1560 for one 480x832 frame)."),
        axes={"batch_size": var("Videos"), "seq_len": var("Video tokens"),
              "num_heads": const(5, "num_heads 40 / Ulysses degree 8"), "head_dim": const(128, "dim / num_heads")},
        inputs={"q": tensor(["batch_size", "num_heads", "seq_len", "head_dim"], "float8_e4m3fn"),
                "k": tensor(["batch_size", "num_heads", "seq_len", "head_dim"], "float8_e4m3fn"),
                "v": tensor(["batch_size", "num_heads", "seq_len", "head_dim"], "float8_e4m3fn"),
                "q_descale": tensor(["batch_size", "num_heads"], "float32"),
                "k_descale": tensor(["batch_size", "num_heads"], "float32"),
                "v_descale": tensor(["batch_size", "num_heads"], "float32")},
        outputs={"out": tensor(["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16")},
        reference=_FP8_ATTENTION_REF, custom_inputs_entrypoint="make_inputs",
        workloads=grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), seq_len=(130, 390, 390, 780, 1170, 780, 1560, 2080)),
        tolerance=BF16)


# ================================================================================================
# FP8 training: backward GEMMs and quantize-for-backward
_TE_LINEAR_BWD_REF = """import torch


def make_inputs(axes_and_scalars, device):
    t, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]

    def cast(x, fp8_max, dtype):
        scale_inv = (x.abs().amax() / fp8_max).reshape(1)  # delayed scaling: amax of a recent step
        scale_inv = scale_inv * (1.0 + 0.5 * torch.rand(1, device=device))
        return (x / scale_inv).clamp(-fp8_max, fp8_max).to(dtype), scale_inv

    go, go_s = cast(torch.randn(t, n, device=device), 57344.0, torch.float8_e5m2)
    x, x_s = cast(torch.randn(t, k, device=device), 448.0, torch.float8_e4m3fn)
    w, w_s = cast(torch.randn(n, k, device=device) * k ** -0.5, 448.0, torch.float8_e4m3fn)
    return {"grad_output": go, "grad_output_scale_inv": go_s, "x": x, "x_scale_inv": x_s,
            "weight": w, "weight_scale_inv": w_s}


def run(grad_output, grad_output_scale_inv, x, x_scale_inv, weight, weight_scale_inv):
    go = grad_output.to(torch.float32) * grad_output_scale_inv
    grad_input = go @ (weight.to(torch.float32) * weight_scale_inv)
    grad_weight = go.T @ (x.to(torch.float32) * x_scale_inv)
    return grad_input.to(torch.bfloat16), grad_weight
"""


def te_fp8_linear_backward() -> ProblemDraft:
    m, k, n = LLAMA_8B, 4096, 1024
    return problem(
        set="L1", name="llama31_8b_fp8_linear_backward_k_proj", op_type="gemm_fp8_backward", model=m,
        backward=True,
        description=("Llama-3.1-8B FP8 training (Transformer Engine HYBRID recipe, per-tensor delayed scaling) of "
                     "k_proj, hidden_size 4096 -> num_key_value_heads 8 x head_dim 128 = 1024: backward of y = x "
                     "W^T with grad_output in e5m2, the saved input x and the weight in e4m3, each with one fp32 "
                     "scale_inv (dequantized = code * scale_inv). grad_input = go @ W (bf16), grad_weight = go^T @ x "
                     "(fp32, for the fp32 main-grad accumulation); fp32 accumulation."),
        axes={"num_tokens": var("Tokens in the micro-batch (batch x sequence)"),
              "in_features": const(k, "hidden_size"), "out_features": const(n, "kv width"),
              "one": const(1, "per-tensor")},
        inputs={"grad_output": tensor(["num_tokens", "out_features"], "float8_e5m2"),
                "grad_output_scale_inv": tensor(["one"], "float32"),
                "x": tensor(["num_tokens", "in_features"], "float8_e4m3fn", "saved FP8 input of the forward"),
                "x_scale_inv": tensor(["one"], "float32"),
                "weight": tensor(["out_features", "in_features"], "float8_e4m3fn"),
                "weight_scale_inv": tensor(["one"], "float32")},
        outputs={"grad_input": tensor(["num_tokens", "in_features"], "bfloat16"),
                 "grad_weight": tensor(["out_features", "in_features"], "float32")},
        reference=_TE_LINEAR_BWD_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((64, 128, 256, 384, 500, 512, 768, 1024)), tolerance=BF16)


_BLOCK_LINEAR_BWD_REF = """import torch
""" + _FP8_GROUP_QUANT + _FP8_BLOCK_QUANT + _FP8_BLOCK_DEQUANT + """

def make_inputs(axes_and_scalars, device):
    t, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    go = torch.randn(t, n, device=device)
    x = torch.randn(t, k, device=device)
    grad_output, grad_output_scale = _group_quant_fp8(go, 128)          # 1x128 along N, for dgrad
    grad_output_t, grad_output_t_scale = _group_quant_fp8(go.T, 128)    # 1x128 along tokens, for wgrad
    x_t, x_t_scale = _group_quant_fp8(x.T, 128)
    weight, weight_scale = _block_quant_fp8(torch.randn(n, k, device=device) * k ** -0.5, 128)
    return {"grad_output": grad_output, "grad_output_scale": grad_output_scale,
            "grad_output_t": grad_output_t, "grad_output_t_scale": grad_output_t_scale,
            "x_t": x_t, "x_t_scale": x_t_scale, "weight": weight, "weight_scale": weight_scale}


def run(grad_output, grad_output_scale, grad_output_t, grad_output_t_scale, x_t, x_t_scale, weight, weight_scale):
    grad_input = _dequant_groups(grad_output, grad_output_scale) @ _dequant_blocks(weight, weight_scale)
    grad_weight = _dequant_groups(grad_output_t, grad_output_t_scale) @ _dequant_groups(x_t, x_t_scale).T
    return grad_input.to(torch.bfloat16), grad_weight
"""


def blockwise_fp8_linear_backward() -> ProblemDraft:
    m, k, n = DEEPSEEK_V3, 1536, 3072
    return problem(
        set="L1", name="deepseek_v3_fp8_blockwise_linear_backward_q_b_proj", op_type="gemm_fp8_backward",
        model=m, backward=True,
        description=("DeepSeek-V3 FP8 training (fine-grained quantization of the DeepSeek-V3 report) of MLA "
                     "q_b_proj, q_lora_rank 1536 -> 16 heads x (qk_nope_head_dim 128 + qk_rope_head_dim 64) = 3072, "
                     "a tensor-parallel shard TP=8 of num_attention_heads 128. dgrad = go @ W with grad_output in "
                     "1x128 groups along N and W in 128x128 blocks (published_quantization weight_block_size); "
                     "wgrad = go^T @ x with both operands quantized in 1x128 groups along the token dimension "
                     "(grad_output_t [N, T], x_t [K, T]). e4m3 codes, fp32 scales (amax / 448), fp32 accumulation; "
                     "grad_input bf16, grad_weight fp32. num_tokens is a multiple of 128."),
        axes={"num_tokens": var("Tokens in the micro-batch, a multiple of 128"),
              "in_features": const(k, "q_lora_rank"), "out_features": const(n, "16 x (128 + 64)"),
              "t_groups": {"type": "expr", "expression": "num_tokens // 128"},
              "k_blocks": {"type": "expr", "expression": "in_features // 128"},
              "n_blocks": {"type": "expr", "expression": "out_features // 128"}},
        inputs={"grad_output": tensor(["num_tokens", "out_features"], "float8_e4m3fn"),
                "grad_output_scale": tensor(["num_tokens", "n_blocks"], "float32"),
                "grad_output_t": tensor(["out_features", "num_tokens"], "float8_e4m3fn"),
                "grad_output_t_scale": tensor(["out_features", "t_groups"], "float32"),
                "x_t": tensor(["in_features", "num_tokens"], "float8_e4m3fn", "saved input, transposed"),
                "x_t_scale": tensor(["in_features", "t_groups"], "float32"),
                "weight": tensor(["out_features", "in_features"], "float8_e4m3fn"),
                "weight_scale": tensor(["n_blocks", "k_blocks"], "float32")},
        outputs={"grad_input": tensor(["num_tokens", "in_features"], "bfloat16"),
                 "grad_weight": tensor(["out_features", "in_features"], "float32")},
        reference=_BLOCK_LINEAR_BWD_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((128, 256, 384, 512, 640, 768, 896, 1024)), tolerance=BF16)


_CAST_TRANSPOSE_REF = """import torch


def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    return {"grad_output": torch.randn(t, h, device=device).to(torch.bfloat16)}


def run(grad_output):
    g = grad_output.to(torch.float32)
    scale = 57344.0 / g.abs().amax().clamp_min(1e-12)
    q = (g * scale).clamp(-57344.0, 57344.0).to(torch.float8_e5m2)
    return q, q.T.contiguous(), (1.0 / scale).reshape(1)
"""


def fp8_cast_transpose() -> ProblemDraft:
    m, h = LLAMA4_MAVERICK_H, 5120
    return problem(
        set="L1", name="llama4_maverick_fp8_grad_cast_transpose_h5120", op_type="quantize_fp8_backward",
        model=m, backward=True,
        description=("Llama-4-Maverick FP8 training (Meta trained Llama 4 in FP8), the quantize-for-backward step "
                     "of Transformer Engine current scaling: the incoming grad_output [num_tokens, 5120] "
                     "(hidden_size) in bf16 is cast once to e5m2 with one per-tensor scale = 57344 / amax, and "
                     "written both row-major (for dgrad) and transposed [5120, num_tokens] (for wgrad), with "
                     "scale_inv = 1 / scale (TE fp8_cast_transpose with amax reduction)."),
        axes={"num_tokens": var("Tokens in the micro-batch"), "hidden_size": const(h, "hidden_size"),
              "one": const(1, "per-tensor")},
        inputs={"grad_output": tensor(["num_tokens", "hidden_size"], "bfloat16")},
        outputs={"grad_fp8": tensor(["num_tokens", "hidden_size"], "float8_e5m2"),
                 "grad_fp8_t": tensor(["hidden_size", "num_tokens"], "float8_e5m2"),
                 "scale_inv": tensor(["one"], "float32")},
        reference=_CAST_TRANSPOSE_REF, custom_inputs_entrypoint="make_inputs",
        workloads=tokens((1, 16, 128, 255, 512, 1000, 1024, 2048)), tolerance=QUANTIZER_TOLERANCE)

# ================================================================================================
# GPU tier (workload.jsonl): upstream's scale; the recipes' own small workloads become workload.cpu.jsonl.
# Local sweeps (catalog/sweeps.py is written on another branch; the lead dedupes at merge).

SERVE_TOKENS = (1, 4, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384, 32768, 65536)
"""Tokens in a serving step: decode batches through chunked-prefill budgets to a 64k-token prefill."""
WIDE_TOKENS = (1, 4, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
"""For narrow layers (a 1024-wide k_proj, a 768-wide expert), whose largest step moves 400 MB only at 128k tokens
(or routed rows): a long-context prefill."""
TRAIN_TOKENS = (512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 10240, 12288, 16384, 20480, 24576, 32768, 49152,
                65536)
"""Tokens in a training micro-batch (batch x sequence), 1k-64k, multiples of 128 (the 1x128 groups)."""
FLUX_IMAGE_TOKENS = (256, 1024, 2304, 4096, 6144, 8192, 9216, 12288, 16384, 18432, 24576, 32768, 36864, 49152,
                     65536, 73728)
"""batch x (H/16) x (W/16): 256 px to 2048 px images (256-16384 tokens each), batches of 1-16."""
WHISPER_FRAMES = tuple(1500 * b for b in (1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64, 80))
"""The encoder's 1,500 frames per 30 s clip (max_source_positions), batches of 1-80 clips."""
VIT_TOKENS = tuple(197 * b for b in (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024))
"""197 tokens per 224 px image (14 x 14 patches + CLS), batches of 1-1024."""
DECODE_CONTEXTS = ((1, 1024), (1, 8192), (1, 32768), (4, 4096), (8, 2048), (8, 16384), (16, 1024), (16, 8192),
                   (32, 4096), (32, 16384), (64, 2048), (64, 8192), (128, 1024), (128, 4096), (256, 2048),
                   (512, 1024))
"""(sequences, KV context): decode batches of 1-512 over 1k-32k cached tokens."""
WAN_VIDEO = ((1, 1560), (1, 3120), (1, 4680), (1, 7800), (1, 14040), (1, 20280), (1, 26520), (1, 32760), (2, 32760),
             (1, 3600), (1, 18000), (1, 32400), (1, 46800), (1, 61200), (1, 75600), (2, 75600))
"""(videos, tokens): latent frames x (H/16) x (W/16) at 480x832 (30 x 52 = 1,560 per latent frame) and 720x1280
(45 x 80 = 3,600), 1-21 latent frames (81 video frames = 21 latent ones)."""


def drafts() -> list[ProblemDraft]:
    gpu = tokens(SERVE_TOKENS)
    rows = tokens(SERVE_TOKENS, "num_rows")
    return [
        with_gpu_tier(fp8_group_quant(), gpu),
        with_gpu_tier(fp8_silu_mul_quant(), gpu),
        with_gpu_tier(fp8_per_token_quant(), gpu),
        with_gpu_tier(rmsnorm_static_fp8_quant(), gpu),
        with_gpu_tier(fp8_block_gemm(DEEPSEEK_V3, "deepseek_v3_fp8_block_gemm_q_a_proj", 7168, 1536,
                                     "MLA q_a_proj: hidden_size 7168 -> q_lora_rank 1536",
                                     (1, 3, 16, 64, 100, 128, 255, 512, 1024)), gpu),
        with_gpu_tier(fp8_block_gemm(KIMI_K2, "kimi_k2_fp8_block_gemm_down_proj_tp16", 1152, 7168,
                                     "dense-layer down_proj, tensor-parallel shard TP=16: intermediate_size 18432 / 16 = "
                                     "1152 -> hidden_size 7168", (1, 3, 16, 64, 100, 128, 255, 512, 1024)), gpu),
        with_gpu_tier(fp8_moe_block(QWEN3_235B, "qwen3_235b_a22b_fp8_moe_down_grouped_ep32", 1536, 4096, 4,
                                    "routed-expert down_proj: moe_intermediate_size 1536 -> hidden_size 4096; "
                                    "Qwen3-235B-A22B-FP8 with expert parallelism EP=32 (num_experts 128 / 32 = 4 "
                                    "experts per rank)", (1, 4, 16, 64, 128, 200, 384, 512, 1024)), rows),
        with_gpu_tier(fp8_moe_block(QWEN3_30B, "qwen3_30b_a3b_fp8_moe_gate_up_grouped_ep16", 2048, 1536, 8,
                                    "routed-expert fused gate_up: hidden_size 2048 -> 2 x moe_intermediate_size 768; "
                                    "Qwen3-30B-A3B-FP8 with EP=16 (num_experts 128 / 16 = 8 experts per rank)",
                                    (1, 8, 24, 64, 128, 300, 512, 1024, 2048)), tokens(WIDE_TOKENS, "num_rows")),
        with_gpu_tier(fp8_per_tensor_gemm(LLAMA_8B, "llama31_8b_fp8_per_tensor_gemm_qkv_tp2", 4096, 3072,
                                          "fused qkv_proj, TP=2 shard: hidden_size 4096 -> (32 + 2 x 8) / 2 heads x "
                                          "128 = 3072, as in the Llama-3.1-8B-Instruct-FP8 checkpoints",
                                          (1, 2, 16, 64, 128, 255, 512, 1000)), gpu),
        with_gpu_tier(fp8_per_tensor_gemm(FLUX_DEV, "flux1_dev_fp8_per_tensor_gemm_attn_proj", 3072, 3072,
                                          "image-stream attention output projection hidden_size 3072 -> 3072 (24 "
                                          "heads x 128) of a double-stream block, FP8 e4m3 checkpoint",
                                          (256, 512, 576, 1024, 1296, 1536, 2048, 2304),
                                          axis_description="Image tokens: batch x (H/16) x (W/16) latent patches"),
                      tokens(FLUX_IMAGE_TOKENS)),
        with_gpu_tier(fp8_rowwise_gemm(LLAMA_70B_O, "llama31_70b_fp8_rowwise_gemm_o_proj_tp8", 1024, 8192,
                                       "o_proj, tensor-parallel shard TP=8: num_attention_heads 64 / 8 x head_dim 128 "
                                       "= 1024 -> hidden_size 8192; per-token dynamic activations and per-channel "
                                       "weights as in the Meta-Llama-3.1-70B-Instruct-FP8-dynamic checkpoints",
                                       (1, 2, 8, 32, 64, 100, 255, 512, 1024)), gpu),
        with_gpu_tier(fp8_rowwise_gemm(LLAMA4_MAVERICK, "llama4_maverick_fp8_rowwise_gemm_down_proj_tp8", 2048, 5120,
                                       "dense-layer down_proj, TP=8 shard: intermediate_size_mlp 16384 / 8 = 2048 -> "
                                       "hidden_size 5120; the Llama-4-Maverick-17B-128E-Instruct-FP8 release",
                                       (1, 4, 16, 64, 128, 255, 512, 1024)), gpu),
        with_gpu_tier(nvfp4_quantize(), gpu),
        with_gpu_tier(nvfp4_gemm(), tokens(WIDE_TOKENS)),
        with_gpu_tier(mxfp4_moe(), rows),
        with_gpu_tier(mxfp8_quantize(), gpu),
        with_gpu_tier(int8_w8a8_gemm(), tokens(WHISPER_FRAMES)),
        with_gpu_tier(layernorm_int8_quant(), tokens(VIT_TOKENS)),
        with_gpu_tier(awq_int4_gemm(), gpu),
        with_gpu_tier(gptq_int4_gemm(), gpu),
        with_gpu_tier(fp8_kv_append(), gpu),
        with_gpu_tier(fp8_kv_decode_attention(), grid(batch_size=[b for b, _ in DECODE_CONTEXTS],
                                                        kv_len=[c for _, c in DECODE_CONTEXTS])),
        with_gpu_tier(fp8_attention(), grid(batch_size=[b for b, _ in WAN_VIDEO], seq_len=[t for _, t in WAN_VIDEO])),
        with_gpu_tier(te_fp8_linear_backward(), tokens(TRAIN_TOKENS)),
        with_gpu_tier(blockwise_fp8_linear_backward(), tokens(TRAIN_TOKENS)),
        with_gpu_tier(fp8_cast_transpose(), tokens(TRAIN_TOKENS)),
    ]
