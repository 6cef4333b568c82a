"""Quant: NVFP4 fused blocks of real models, forward only.

NVFP4 as NVIDIA's ModelOpt checkpoints store it and TensorRT-LLM / FlashInfer / vLLM serve it: E2M1 values
packed two per byte (``float4_e2m1fn_x2``, element 2i in the low nibble), one E4M3 scale per 16 elements
along K, and a per-tensor fp32 scale (a weight's ``weight_scale_2``, an activation's static
``input_scale``, both *decode* scales: value = code x block scale x per-tensor scale). Activations are
quantised inside the block as ``fp4_quantize`` does (per 16 elements ``sf = e4m3(gs * amax / 6)`` with the
encode scale ``gs = 1 / input_scale``, codes ``e2m1(x * (1 / (sf / gs)))`` round-to-nearest-even,
saturating at 6; linear, not swizzled, scale layout); the GEMM is ``alpha * (a x a_sf) @ (w x w_sf)^T``
with ``alpha = input_scale * weight_scale_2`` (vLLM ``ModelOptNvFp4LinearMethod``, FlashInfer ``mm_fp4``),
fp32 accumulation.

Blocks: RMSNorm (+ residual add) fused with the quantisation of its output, SwiGLU + quantise, GEMM
+ bias + GELU, GEMM + squared ReLU + quantise (Nemotron-H), the whole gated MLP, attention QKV and output
(+ residual) projections, Mamba2 in_proj / out_proj, MoE expert GEMMs with the routing given (tie-safe:
the selected experts are integer inputs), expert-weight dequantisation, KV-cache quantisation and a
vocabulary-parallel lm_head. Every dimension is a published value of the model's record in
model-configs.json; where a layer is a tensor- or expert-parallel shard, the shard is a real function
(column-parallel outputs, a row-parallel partial sum before its all-reduce, this rank's experts).

References decode the 4-bit codes by table lookup and multiply by their block scales, exactly as
`solbench.spec.nvfp4` emulates ``torch._scaled_mm`` on the CPU, so the analyser counts each matrix
product at the FP4 rate. Weights are drawn directly as codes and scales (uniform codes, block scales in
[64, 448], ``weight_scale_2`` chosen so the dequantised weight has std ``fan_in ** -0.5``), which is
quick on the CPU and keeps activations at unit scale.

Two tiers: ``workload.jsonl`` holds 16 serving-scale workloads (decode to 32k-token prefill chunks,
expert-parallel degrees from EP=1), ``workload.cpu.jsonl`` 8 small ones that run well under a second.
"""

from __future__ import annotations

from suite_recipes.builder import const, expr, problem, slug, tensor, var
from suite_recipes.models import model
from suite_recipes.snippets import ACC, E2M1_CODES
from suite_recipes.shapes import tokens
from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for

FAMILY = "family:nvfp4"
BF16 = tolerance_for("bfloat16")
FP4_QUANT_TOLERANCE = {"max_atol": 1e-6, "max_rtol": 1e-5, "required_matched_ratio": 0.999}
"""Codes and block scales compare value for value; 0.1% may flip where a reordered fp32 reduction (the
RMS, a GEMM accumulation) moves a value across a rounding boundary. A truncating or differently scaled
quantiser moves most codes and fails."""
GEMM_QUANT_TOLERANCE = {"max_atol": 1e-6, "max_rtol": 1e-5, "required_matched_ratio": 0.99}
"""A GEMM's output quantised: summation order moves a bf16 value across an FP4 rounding boundary more often."""

# --- local sweeps (catalog/sweeps.py lands on main later) ---------------------------------------------
GEMM_TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
"""Tokens per forward: decode batches through 32k-token prefill chunks."""
LONG_TOKENS = (1, 4, 16, 64, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768, 65536, 131072)
"""For elementwise blocks with no weights (norm / activation / KV quantisers): up to a 128k-token prefill."""
CPU_GEMM_TOKENS = (3, 5, 7, 12, 24, 40, 77, 96)
CPU_ELEMENTWISE_TOKENS = (3, 7, 24, 100, 255, 384, 777, 1500)

# --- models (every value copied from model-configs.json) -----------------------------------------------
LLAMA_70B = model("Llama-3.1-70B", "meta-llama/Llama-3.1-70B", "language",
                  {"hidden_size": 8192, "rms_norm_eps": 1e-05, "num_key_value_heads": 8, "derived.head_dim": 128})
QWEN3_32B = model("Qwen3-32B", "Qwen/Qwen3-32B", "language", {"hidden_size": 5120, "rms_norm_eps": 1e-06})
LLAMA_8B = model("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "language",
                 {"hidden_size": 4096, "intermediate_size": 14336, "hidden_act": "silu", "num_attention_heads": 32,
                  "num_key_value_heads": 8, "derived.head_dim": 128})
NEMOTRON_H = model("Nemotron-H-56B-Base-8K", "nvidia/Nemotron-H-56B-Base-8K", "language",
                   {"hidden_size": 8192, "intermediate_size": 32768, "mlp_hidden_act": "relu2", "mlp_bias": False})
QWEN3_8B = model("Qwen3-8B", "Qwen/Qwen3-8B", "language",
                 {"hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128, "attention_bias": False})
WAN_13B = model("Wan2.1-T2V-1.3B", "Wan-AI/Wan2.1-T2V-1.3B", "video", {"dim": 1536, "ffn_dim": 8960})
QWEN3_30B = model("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", "language",
                  {"hidden_size": 2048, "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
                   "hidden_act": "silu"})
NEMOTRON_NANO_MOE = model("NVIDIA-Nemotron-3-Nano-30B-A3B", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "language",
                          {"hidden_size": 2688, "moe_intermediate_size": 1856, "num_experts": 128,
                           "num_experts_per_tok": 6, "mlp_hidden_act": "relu2"})
NEMOTRON_NANO_MAMBA = model("NVIDIA-Nemotron-3-Nano-30B-A3B", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
                            "language", {"hidden_size": 2688, "mamba_num_heads": 64, "mamba_head_dim": 64,
                                         "mamba_proj_bias": False})
MAMBA2 = model("Mamba2-2.7B", "state-spaces/mamba2-2.7b", "language",
               {"hidden_size": 2560, "ssm_state_size": 128, "n_groups": 1, "derived.d_inner": 5120,
                "derived.mamba_num_heads": 80})
QWEN3_30B_EXPERT = model("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", "language",
                         {"hidden_size": 2048, "moe_intermediate_size": 768})
PHI35_MINI = model("Phi-3.5-mini-instruct", "microsoft/Phi-3.5-mini-instruct", "language",
                   {"hidden_size": 3072, "vocab_size": 32064, "tie_word_embeddings": False})

# --- reference building blocks (pasted into every reference) --------------------------------------------
_NVFP4 = '''import torch
import torch.nn.functional as F

E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
"""The value of each 4-bit code: bit 3 is the sign."""


''' + ACC + '''

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


''' + E2M1_CODES + '''

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
'''


TOKENS = var("Tokens in the forward (batch x sequence)")


def _weight_inputs(prefix: str, rows: str, k_packed: str, k_blocks: str, lead: tuple = ()) -> dict:
    return {f"{prefix}weight": tensor([*lead, rows, k_packed], "float4_e2m1fn_x2", "E2M1 codes, two per byte"),
            f"{prefix}weight_scale": tensor([*lead, rows, k_blocks], "float8_e4m3fn", "one E4M3 scale per 16 along K"),
            f"{prefix}weight_scale_2": tensor(list(lead) or ["one"], "float32", "per-tensor decode scale")}


def _packed_axes(k_name: str, k_value: int, what: str) -> dict:
    return {k_name: const(k_value, what), f"{k_name}_packed": expr(f"{k_name} // 2"),
            f"{k_name}_blocks": expr(f"{k_name} // 16")}


# ================================================================================================
# Norm / activation + quantise (no weights)
_RMSNORM_QUANT = '''
EPS = @EPS@


def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    return {"hidden_states": torch.randn(t, h, device=device).to(torch.bfloat16),
            "weight": (1.0 + 0.1 * torch.randn(h, device=device)).to(torch.bfloat16),
            "input_scale": _static_scale(8.0, device)}


@torch.no_grad()
def run(hidden_states, weight, input_scale):
    """RMSNorm in fp32 (x * rsqrt(mean(x^2) + eps) * weight), quantised to NVFP4 without a bf16 round trip."""
    x = hidden_states.to(_acc(hidden_states))
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight.to(x.dtype)
    return _quantize(y, input_scale)
'''

_ADD_RMSNORM_QUANT = '''
EPS = @EPS@


def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    return {"hidden_states": torch.randn(t, h, device=device).to(torch.bfloat16),
            "residual": torch.randn(t, h, device=device).to(torch.bfloat16),
            "weight": (1.0 + 0.1 * torch.randn(h, device=device)).to(torch.bfloat16),
            "input_scale": _static_scale(8.0, device)}


@torch.no_grad()
def run(hidden_states, residual, weight, input_scale):
    """residual += hidden_states (rounded to the residual's dtype, as the next layer reads it); RMSNorm of
    the sum in fp32, quantised to NVFP4."""
    summed = (hidden_states.to(_acc(hidden_states)) + residual.to(_acc(hidden_states))).to(residual.dtype)
    x = summed.to(_acc(hidden_states))
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight.to(x.dtype)
    codes, sf = _quantize(y, input_scale)
    return summed, codes, sf
'''


def rmsnorm_quant(m, *, add: bool) -> ProblemDraft:
    h, eps = m.config["hidden_size"], m.config["rms_norm_eps"]
    what = "fused_add_rmsnorm_quant" if add else "rmsnorm_quant"
    inputs = {"hidden_states": tensor(["num_tokens", "hidden_size"], "bfloat16")}
    outputs = {}
    if add:
        inputs["residual"] = tensor(["num_tokens", "hidden_size"], "bfloat16", "the residual stream")
        outputs["residual_out"] = tensor(["num_tokens", "hidden_size"], "bfloat16", "hidden_states + residual")
    inputs["weight"] = tensor(["hidden_size"], "bfloat16", "RMSNorm weight")
    inputs["input_scale"] = tensor(["one"], "float32", "static decode scale of the next GEMM's input")
    outputs["x_fp4"] = tensor(["num_tokens", "hidden_size_packed"], "float4_e2m1fn_x2")
    outputs["x_sf"] = tensor(["num_tokens", "hidden_size_blocks"], "float8_e4m3fn", "block scales, linear layout")
    text = ("the residual add (residual_out = hidden_states + residual, in bf16) and " if add else "")
    return problem(
        "Quant", m, f"{slug(m)}_nvfp4_{'add_' if add else ''}rmsnorm_quant_h{h}", what,
        f"{m.name} served in NVFP4: {text}the RMSNorm before a quantised GEMM (hidden_size {h}, rms_norm_eps {eps}) "
        "fused with the quantisation of its output to NVFP4 with the GEMM's static input_scale (TensorRT-LLM's "
        "fused RMSNorm + FP4 quant, FlashInfer rmsnorm_fp4quant): the normalised value stays fp32 until it is "
        "quantised. Codes and block scales must match.",
        axes={"num_tokens": TOKENS, **_packed_axes("hidden_size", h, "hidden_size"), "one": const(1, "per-tensor")},
        inputs=inputs, outputs=outputs,
        reference=_NVFP4 + (_ADD_RMSNORM_QUANT if add else _RMSNORM_QUANT).replace("@EPS@", repr(eps)),
        gpu=tokens(LONG_TOKENS), workloads=tokens(CPU_ELEMENTWISE_TOKENS), tolerance=FP4_QUANT_TOLERANCE,
        tags=[FAMILY, "kernel:rmsnorm_fp4_quant"], custom_inputs_entrypoint="make_inputs")


_SILU_MUL_QUANT = '''
def make_inputs(axes_and_scalars, device):
    t, i = axes_and_scalars["num_tokens"], axes_and_scalars["intermediate_size"]
    return {"gate_up": torch.randn(t, 2 * i, device=device).to(torch.bfloat16),
            "input_scale": _static_scale(16.0, device)}


@torch.no_grad()
def run(gate_up, input_scale):
    """silu(gate) * up in fp32 (gate = the first half, as vLLM's MergedColumnParallelLinear packs gate_up),
    quantised to NVFP4 for down_proj."""
    half = gate_up.shape[-1] // 2
    g = gate_up[..., :half].to(_acc(gate_up))
    return _quantize(F.silu(g) * gate_up[..., half:].to(g.dtype), input_scale)
'''


def silu_mul_quant(m) -> ProblemDraft:
    h, i = m.config["hidden_size"], m.config["intermediate_size"]
    return problem(
        "Quant", m, f"{slug(m)}_nvfp4_silu_mul_quant_i{i}", "silu_mul_quant_fp4",
        f"{m.name} NVFP4 MLP between its GEMMs (hidden_size {h}, intermediate_size {i}, hidden_act silu): the "
        "gate_up GEMM's bf16 output [num_tokens, 2 x 14336] goes through SwiGLU, silu(gate) * up in fp32, and is "
        "quantised to NVFP4 with down_proj's static input_scale (vLLM silu_and_mul_nvfp4_quant, TensorRT-LLM's "
        "fused activation + FP4 quant).",
        axes={"num_tokens": TOKENS, **_packed_axes("intermediate_size", i, "intermediate_size"),
         "gate_up_size": expr("2 * intermediate_size"), "one": const(1, "per-tensor")},
        inputs={"gate_up": tensor(["num_tokens", "gate_up_size"], "bfloat16", "[gate | up]"),
         "input_scale": tensor(["one"], "float32", "down_proj's static decode scale")},
        outputs={"act_fp4": tensor(["num_tokens", "intermediate_size_packed"], "float4_e2m1fn_x2"),
         "act_sf": tensor(["num_tokens", "intermediate_size_blocks"], "float8_e4m3fn")},
        reference=_NVFP4 + _SILU_MUL_QUANT,
        gpu=tokens(LONG_TOKENS), workloads=tokens(CPU_ELEMENTWISE_TOKENS), tolerance=FP4_QUANT_TOLERANCE,
        tags=[FAMILY, "kernel:silu_mul_fp4_quant"], custom_inputs_entrypoint="make_inputs")


_KV_QUANT = '''
def make_inputs(axes_and_scalars, device):
    t, hkv, d = axes_and_scalars["num_tokens"], axes_and_scalars["num_kv_heads"], axes_and_scalars["head_dim"]
    return {"key": torch.randn(t, hkv, d, device=device).to(torch.bfloat16),
            "value": torch.randn(t, hkv, d, device=device).to(torch.bfloat16),
            "k_scale": _static_scale(8.0, device), "v_scale": _static_scale(8.0, device)}


@torch.no_grad()
def run(key, value, k_scale, v_scale):
    """The new tokens' K and V quantised to NVFP4 with the cache's static per-tensor scales (blocks of 16
    along head_dim); the caller scatters them into their cache slots."""
    k_fp4, k_sf = _quantize(key, k_scale)
    v_fp4, v_sf = _quantize(value, v_scale)
    return k_fp4, k_sf, v_fp4, v_sf
'''


def kv_quant(m) -> ProblemDraft:
    hkv, d = m.config["num_key_value_heads"], m.config["derived.head_dim"]
    return problem(
        "Quant", m, f"{slug(m)}_nvfp4_kv_cache_quant_kv{hkv}_d{d}", "kv_cache_quant_fp4",
        f"{m.name} with an NVFP4 KV cache (TensorRT-LLM on Blackwell): the K and V of the step's new tokens, "
        f"[num_tokens, {hkv} (num_key_value_heads), {d} (head_dim)] in bf16, quantised with the cache's static "
        "k_scale / v_scale, one E4M3 scale per 16 elements of head_dim. Only the new tokens are written: the "
        "outputs are what lands in their cache slots, not the whole cache.",
        axes={"num_tokens": TOKENS, "num_kv_heads": const(hkv, "num_key_value_heads"),
         **_packed_axes("head_dim", d, "head_dim"), "one": const(1, "per-tensor")},
        inputs={"key": tensor(["num_tokens", "num_kv_heads", "head_dim"], "bfloat16"),
         "value": tensor(["num_tokens", "num_kv_heads", "head_dim"], "bfloat16"),
         "k_scale": tensor(["one"], "float32"), "v_scale": tensor(["one"], "float32")},
        outputs={"k_fp4": tensor(["num_tokens", "num_kv_heads", "head_dim_packed"], "float4_e2m1fn_x2"),
         "k_sf": tensor(["num_tokens", "num_kv_heads", "head_dim_blocks"], "float8_e4m3fn"),
         "v_fp4": tensor(["num_tokens", "num_kv_heads", "head_dim_packed"], "float4_e2m1fn_x2"),
         "v_sf": tensor(["num_tokens", "num_kv_heads", "head_dim_blocks"], "float8_e4m3fn")},
        reference=_NVFP4 + _KV_QUANT,
        gpu=tokens(LONG_TOKENS), workloads=tokens(CPU_ELEMENTWISE_TOKENS), tolerance=FP4_QUANT_TOLERANCE,
        tags=[FAMILY, "family:rope_kv", "kernel:kv_cache_fp4_quant"], custom_inputs_entrypoint="make_inputs")


# ================================================================================================
# NVFP4 linear layers with fused epilogues
_LINEAR_INPUTS = '''
def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    t, k, n = a["num_tokens"], a["in_features"], a["out_features"]
    weight, weight_scale, weight_scale_2 = _random_weight((n, k), k ** -0.5, device)
    out = {"x": torch.randn(t, k, device=device).to(torch.bfloat16), "input_scale": _static_scale(8.0, device),
           "weight": weight, "weight_scale": weight_scale, "weight_scale_2": weight_scale_2}
@EXTRA@    return out
'''

_EPILOGUES = {
    "plain": ("", "    return y.to(x.dtype)\n"),
    "split": ("", "    return tuple(part.to(x.dtype) for part in torch.split(y, SPLIT, dim=-1))\n"),
    "residual": ('    out["residual"] = torch.randn(t, n, device=device).to(torch.bfloat16)\n',
                 "    return (y + residual.to(y.dtype)).to(x.dtype)\n"),
    "bias_gelu": ('    out["bias"] = (0.02 * torch.randn(n, device=device)).to(torch.bfloat16)\n',
                  "    return F.gelu(y + bias.to(y.dtype), approximate=\"tanh\").to(x.dtype)\n"),
    "relu2_quant": ('    out["output_scale"] = _static_scale(16.0, device)\n',
                    "    return _quantize(torch.relu(y.to(x.dtype).to(y.dtype)).square(), output_scale)\n"),
}
_EXTRA_ARGS = {"plain": "", "split": "", "residual": ", residual", "bias_gelu": ", bias",
               "relu2_quant": ", output_scale"}


def _linear_reference(epilogue: str, split: tuple = ()) -> str:
    extra, tail = _EPILOGUES[epilogue]
    head = f"SPLIT = {list(split)!r}\n" if split else ""
    return (head + _LINEAR_INPUTS.replace("@EXTRA@", extra) + "\n\n@torch.no_grad()\n"
            f"def run(x, input_scale, weight, weight_scale, weight_scale_2{_EXTRA_ARGS[epilogue]}):\n"
            "    y = _linear(x, input_scale, weight, weight_scale, weight_scale_2)\n" + tail)


def nvfp4_linear(m, name: str, op_type: str, description: str, k: int, n: int, *, epilogue: str = "plain",
                 split: dict | None = None, tags=(), gpu=GEMM_TOKENS, cpu=CPU_GEMM_TOKENS) -> ProblemDraft:
    """x [T, K] bf16 -> an NVFP4 linear (activation quantised inside) -> the epilogue's outputs."""
    inputs = {"x": tensor(["num_tokens", "in_features"], "bfloat16"),
              "input_scale": tensor(["one"], "float32", "static decode scale of x"),
              **_weight_inputs("", "out_features", "in_features_packed", "in_features_blocks")}
    axes = {"num_tokens": TOKENS, **_packed_axes("in_features", k, "K"), "out_features": const(n, "N"),
            "one": const(1, "per-tensor")}
    if epilogue == "split":
        for part, width in split.items():
            axes[f"{part}_size"] = const(width, f"{part} columns")
        outputs = {part: tensor(["num_tokens", f"{part}_size"], "bfloat16") for part in split}
        if sum(split.values()) != n:
            raise ValueError(f"{name}: split widths do not add up to {n}")
    elif epilogue == "relu2_quant":
        axes["out_features_packed"] = expr("out_features // 2")
        axes["out_features_blocks"] = expr("out_features // 16")
        inputs["output_scale"] = tensor(["one"], "float32", "the next GEMM's static input decode scale")
        outputs = {"y_fp4": tensor(["num_tokens", "out_features_packed"], "float4_e2m1fn_x2"),
                   "y_sf": tensor(["num_tokens", "out_features_blocks"], "float8_e4m3fn")}
    else:
        outputs = {"y": tensor(["num_tokens", "out_features"], "bfloat16")}
        if epilogue == "residual":
            inputs["residual"] = tensor(["num_tokens", "out_features"], "bfloat16")
        if epilogue == "bias_gelu":
            inputs["bias"] = tensor(["out_features"], "bfloat16")
    tolerance = GEMM_QUANT_TOLERANCE if epilogue == "relu2_quant" else BF16
    return problem("Quant", m, f"{slug(m)}_{name}", op_type, description, axes=axes, inputs=inputs, outputs=outputs,
                  reference=_NVFP4 + _linear_reference(epilogue, tuple(split.values()) if split else ()),
                  gpu=tokens(gpu), workloads=tokens(cpu), tolerance=tolerance,
                  tags=[FAMILY, "kernel:gemm_fp4", *tags], custom_inputs_entrypoint="make_inputs")


# ================================================================================================
# Gated MLP (two GEMMs, the intermediate re-quantised)
_GATED_MLP = '''
def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    t, h, i = a["num_tokens"], a["hidden_size"], a["intermediate_size"]
    gate_up, gate_up_scale, gate_up_scale_2 = _random_weight((2 * i, h), h ** -0.5, device)
    down, down_scale, down_scale_2 = _random_weight((h, i), i ** -0.5, device)
    return {"x": torch.randn(t, h, device=device).to(torch.bfloat16),
            "gate_up_input_scale": _static_scale(8.0, device), "gate_up_weight": gate_up,
            "gate_up_weight_scale": gate_up_scale, "gate_up_weight_scale_2": gate_up_scale_2,
            "down_input_scale": _static_scale(8.0, device), "down_weight": down, "down_weight_scale": down_scale,
            "down_weight_scale_2": down_scale_2}


@torch.no_grad()
def run(x, gate_up_input_scale, gate_up_weight, gate_up_weight_scale, gate_up_weight_scale_2,
        down_input_scale, down_weight, down_weight_scale, down_weight_scale_2):
    """gate_up GEMM (bf16 output), silu(gate) * up in fp32, quantised again, down GEMM."""
    h = _linear(x, gate_up_input_scale, gate_up_weight, gate_up_weight_scale, gate_up_weight_scale_2).to(x.dtype)
    half = h.shape[-1] // 2
    act = F.silu(h[..., :half].to(_acc(x))) * h[..., half:].to(_acc(x))
    return _linear(act, down_input_scale, down_weight, down_weight_scale, down_weight_scale_2).to(x.dtype)
'''


def gated_mlp(m, tp: int) -> ProblemDraft:
    h, inter = m.config["hidden_size"], m.config["intermediate_size"]
    i = inter // tp
    return problem(
        "Quant", m, f"{slug(m)}_nvfp4_swiglu_mlp_h{h}_i{i}_tp{tp}", "mlp_fp4",
        f"{m.name} gated MLP in NVFP4 (ModelOpt NVFP4 checkpoint format), tensor-parallel shard TP={tp}: "
        f"hidden_size {h}, intermediate_size {inter} / {tp} = {i} per rank (gate_up column-parallel, down_proj "
        "row-parallel, so the output is this rank's partial sum before the all-reduce). x is quantised with "
        "gate_up's static input_scale, the gate_up GEMM writes bf16, silu(gate) * up is computed in fp32 and "
        "quantised with down_proj's input_scale, and the down GEMM writes bf16; fp32 accumulation.",
        axes={"num_tokens": TOKENS, **_packed_axes("hidden_size", h, "hidden_size"),
         **_packed_axes("intermediate_size", i, f"intermediate_size / TP={tp}"),
         "gate_up_size": expr("2 * intermediate_size"), "one": const(1, "per-tensor")},
        inputs={"x": tensor(["num_tokens", "hidden_size"], "bfloat16"),
         "gate_up_input_scale": tensor(["one"], "float32"),
         **_weight_inputs("gate_up_", "gate_up_size", "hidden_size_packed", "hidden_size_blocks"),
         "down_input_scale": tensor(["one"], "float32"),
         **_weight_inputs("down_", "hidden_size", "intermediate_size_packed", "intermediate_size_blocks")},
        outputs={"y": tensor(["num_tokens", "hidden_size"], "bfloat16", "partial sum of this rank")},
        reference=_NVFP4 + _GATED_MLP, gpu=tokens(GEMM_TOKENS), workloads=tokens(CPU_GEMM_TOKENS), tolerance=BF16,
        tags=[FAMILY, "kernel:gemm_fp4"], custom_inputs_entrypoint="make_inputs")


# ================================================================================================
# MoE experts with the routing given (flashinfer cutlass_fused_moe / TensorRT-LLM NVFP4 MoE)
_MOE = '''
GATED = @GATED@


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
'''


def moe_experts(m, gpu_pairs, cpu_pairs) -> ProblemDraft:
    h, i = m.config["hidden_size"], m.config["moe_intermediate_size"]
    e, k = m.config["num_experts"], m.config["num_experts_per_tok"]
    gated = "hidden_act" in m.config
    act = "silu(gate) * up (fc1 = [gate | up], 2 x moe_intermediate_size rows)" if gated else \
        "relu(fc1 x)^2 (mlp_hidden_act relu2, non-gated experts)"
    return problem(
        "Quant", m, f"{slug(m)}_nvfp4_moe_experts_e{e}_k{k}_h{h}_i{i}", "moe_fp4",
        f"{m.name} MoE experts in NVFP4 (FlashInfer cutlass_fused_moe / TensorRT-LLM NVFP4 MoE) on one rank of "
        f"expert parallelism: num_experts {e}, num_experts_per_tok {k}, hidden_size {h}, moe_intermediate_size {i}; "
        "the rank holds experts 0 .. num_local_experts-1 (num_experts / EP). The routing is given (topk_ids, "
        "topk_weights from the router), so no tie can change it. hidden_states are quantised once with "
        f"fc1's static input_scale; per expert fc1 GEMM (bf16 output), {act} in fp32, quantised with fc2's "
        "input_scale, fc2 GEMM (bf16), and the outputs summed per token weighted by topk_weights in fp32 "
        "(tokens routed only to other ranks get zeros). The generator makes this rank busy: three tokens in "
        "four route one slot, at a random place (weights in descending order, as a router gives them), to one of "
        "its experts.",
        axes={"num_tokens": TOKENS, "num_local_experts": var("experts on this rank: num_experts / EP"),
         "num_experts": const(e, "num_experts"), "top_k": const(k, "num_experts_per_tok"),
         **_packed_axes("hidden_size", h, "hidden_size"),
         **_packed_axes("intermediate_size", i, "moe_intermediate_size"),
         "fc1_rows": expr("2 * intermediate_size" if gated else "intermediate_size"),
         "one": const(1, "per-tensor")},
        inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], "bfloat16"),
         "topk_ids": tensor(["num_tokens", "top_k"], "int32", "distinct global expert ids per token"),
         "topk_weights": tensor(["num_tokens", "top_k"], "float32"),
         "fc1_input_scale": tensor(["one"], "float32"),
         **_weight_inputs("fc1_", "fc1_rows", "hidden_size_packed", "hidden_size_blocks", ("num_local_experts",)),
         "fc2_input_scale": tensor(["one"], "float32"),
         **_weight_inputs("fc2_", "hidden_size", "intermediate_size_packed", "intermediate_size_blocks",
                          ("num_local_experts",))},
        outputs={"output": tensor(["num_tokens", "hidden_size"], "bfloat16")},
        reference=_NVFP4 + _MOE.replace("@GATED@", repr(gated)),
        gpu=[{"num_tokens": t, "num_local_experts": n} for t, n in gpu_pairs],
        workloads=[{"num_tokens": t, "num_local_experts": n} for t, n in cpu_pairs], tolerance=BF16,
        tags=[FAMILY, "family:moe", "kernel:moe_fp4"], constraints=[f"num_local_experts <= {e}"],
        custom_inputs_entrypoint="make_inputs")


# ================================================================================================
# Dequantisation of expert weights (the emulation path of GPUs without FP4 tensor cores)
_DEQUANT = '''
def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    weight, weight_scale, weight_scale_2 = _random_weight(
        (a["num_experts"], a["out_features"], a["in_features"]), a["in_features"] ** -0.5, device)
    return {"weight": weight, "weight_scale": weight_scale, "weight_scale_2": weight_scale_2}


@torch.no_grad()
def run(weight, weight_scale, weight_scale_2):
    """code x block scale x weight_scale_2, in fp32, rounded once to bf16."""
    values = _dequant(weight, weight_scale, torch.float32) * weight_scale_2.to(torch.float32)[:, None, None]
    return values.to(torch.bfloat16)
'''


def dequant_experts(m) -> ProblemDraft:
    h, i = m.config["hidden_size"], m.config["moe_intermediate_size"]
    return problem(
        "Quant", m, f"{slug(m)}_nvfp4_dequant_expert_down_h{h}_i{i}", "dequantize_fp4",
        f"{m.name} NVFP4 expert weights dequantised to bf16, as vLLM's NVFP4 emulation does on GPUs without FP4 "
        f"tensor cores before a bf16 grouped GEMM: the down_proj of num_experts experts, [hidden_size {h}, "
        f"moe_intermediate_size {i}] each, value = code x E4M3 block scale x the expert's weight_scale_2, "
        "computed in fp32 and rounded once to bf16.",
        axes={"num_experts": var("experts dequantised in one call"), "out_features": const(h, "hidden_size"),
         **_packed_axes("in_features", i, "moe_intermediate_size")},
        inputs=_weight_inputs("", "out_features", "in_features_packed", "in_features_blocks", ("num_experts",)),
        outputs={"weight_bf16": tensor(["num_experts", "out_features", "in_features"], "bfloat16")},
        reference=_NVFP4 + _DEQUANT,
        gpu=[{"num_experts": n} for n in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 80, 96, 112, 128)],
        workloads=[{"num_experts": n} for n in (5, 7, 9, 10, 11, 13, 14, 15)], tolerance=BF16,
        tags=[FAMILY, "family:moe", "kernel:dequantize_fp4"], custom_inputs_entrypoint="make_inputs")


# ================================================================================================
def drafts() -> list[ProblemDraft]:
    llama_qkv = (LLAMA_8B.config["num_attention_heads"] + 2 * LLAMA_8B.config["num_key_value_heads"]) \
        * LLAMA_8B.config["derived.head_dim"]
    q_out = QWEN3_8B.config["num_attention_heads"] * QWEN3_8B.config["head_dim"]
    d_inner, state = MAMBA2.config["derived.d_inner"], MAMBA2.config["ssm_state_size"]
    groups, mheads = MAMBA2.config["n_groups"], MAMBA2.config["derived.mamba_num_heads"]
    in_proj = 2 * d_inner + 2 * groups * state + mheads
    nano_inner = NEMOTRON_NANO_MAMBA.config["mamba_num_heads"] * NEMOTRON_NANO_MAMBA.config["mamba_head_dim"]
    nemo_i = NEMOTRON_H.config["intermediate_size"] // 8
    vocab_shard = PHI35_MINI.config["vocab_size"] // 4
    return [
        rmsnorm_quant(LLAMA_70B, add=False),
        rmsnorm_quant(QWEN3_32B, add=True),
        silu_mul_quant(LLAMA_8B),
        kv_quant(LLAMA_70B),
        gated_mlp(LLAMA_8B, 8),
        nvfp4_linear(
            LLAMA_8B, f"nvfp4_qkv_proj_h4096_n{llama_qkv}", "gemm_fp4",
            f"Llama-3.1-8B attention qkv_proj in NVFP4: hidden_size 4096 -> (num_attention_heads 32 + 2 x "
            f"num_key_value_heads 8) x head_dim 128 = {llama_qkv}, one fused GEMM whose output is split into q "
            "[num_tokens, 4096], k and v [num_tokens, 1024] (bf16). The activation is quantised with the "
            "layer's static input_scale; alpha = input_scale x weight_scale_2; fp32 accumulation.",
            4096, llama_qkv, epilogue="split", split={"q": 4096, "k": 1024, "v": 1024}, tags=["family:attention"]),
        nvfp4_linear(
            QWEN3_8B, f"nvfp4_o_proj_residual_h{q_out}", "gemm_fp4",
            f"Qwen3-8B attention o_proj in NVFP4 (attention_bias false) fused with the residual add: the "
            f"attention output [num_tokens, num_attention_heads 32 x head_dim 128 = {q_out}] is quantised with "
            "the static input_scale, multiplied by the NVFP4 weight (-> hidden_size 4096), and the residual is "
            "added in fp32 before the one bf16 rounding.",
            q_out, 4096, epilogue="residual", tags=["family:attention"]),
        nvfp4_linear(
            WAN_13B, "nvfp4_ffn_fc1_gelu_d1536_f8960", "gemm_fp4",
            "Wan2.1-T2V-1.3B DiT feed-forward first layer in NVFP4 with its epilogue: nn.Linear(dim 1536, ffn_dim "
            "8960) with bias, then GELU(approximate='tanh') (WanAttentionBlock.ffn), bias and GELU applied in fp32 "
            "to the GEMM result before the one bf16 rounding. Tokens are video latent patches (patch_size "
            "[1, 2, 2]: a 480x832 81-frame clip is 21 x 30 x 52 = 32,760 tokens).",
            1536, 8960, epilogue="bias_gelu",
            gpu=(1024, 1560, 2048, 3120, 4096, 6240, 8192, 9360, 12480, 16384, 18720, 24576, 32760, 40960, 49140,
                 65520)),
        nvfp4_linear(
            NEMOTRON_H, f"nvfp4_up_proj_relu2_quant_h8192_i{nemo_i}_tp8", "gemm_fp4",
            f"Nemotron-H-56B MLP layer ('-' in hybrid_override_pattern) in NVFP4, tensor-parallel shard TP=8: "
            f"up_proj hidden_size 8192 -> intermediate_size 32768 / 8 = {nemo_i} (mlp_bias false, column-parallel), "
            "with the epilogue the down_proj needs: the bf16 result goes through mlp_hidden_act relu2 "
            "(relu(x)^2, in fp32) and is quantised to NVFP4 with down_proj's static input_scale (output_scale). "
            "Codes and block scales must match on 99% of elements (a GEMM accumulated in another order may move "
            "a bf16 value across a rounding boundary).",
            8192, nemo_i, epilogue="relu2_quant"),
        nvfp4_linear(
            MAMBA2, f"nvfp4_mamba2_in_proj_h2560_n{in_proj}", "gemm_fp4",
            f"Mamba2-2.7B mixer in_proj in NVFP4: hidden_size 2560 -> 2 x d_inner 5120 + 2 x n_groups 1 x "
            f"ssm_state_size 128 + nheads 80 = {in_proj} (no bias), split as Mamba2.forward does into z "
            f"[num_tokens, 5120], xBC [num_tokens, {d_inner + 2 * groups * state}] (for the causal conv1d) and dt "
            f"[num_tokens, {mheads}].",
            2560, in_proj, epilogue="split",
            split={"z": d_inner, "xBC": d_inner + 2 * groups * state, "dt": mheads}, tags=["family:ssm"]),
        nvfp4_linear(
            NEMOTRON_NANO_MAMBA, f"nvfp4_mamba2_out_proj_k{nano_inner}_h2688", "gemm_fp4",
            f"NVIDIA-Nemotron-3-Nano-30B-A3B Mamba2 mixer out_proj in NVFP4: mamba_num_heads 64 x mamba_head_dim 64 "
            f"= {nano_inner} -> hidden_size 2688 (mamba_proj_bias false), applied to the gated RMSNorm's output.",
            nano_inner, 2688, tags=["family:ssm"]),
        nvfp4_linear(
            PHI35_MINI, f"nvfp4_lm_head_v{vocab_shard}_tp4", "gemm_fp4",
            f"Phi-3.5-mini-instruct lm_head in NVFP4 (ModelOpt can quantise the untied lm_head; tie_word_embeddings "
            f"false), vocabulary-parallel shard TP=4: hidden_size 3072 -> vocab_size 32064 / 4 = {vocab_shard} "
            "logits of this rank (gathered afterwards), bf16; all positions, as for prompt logprobs.",
            3072, vocab_shard, tags=["kernel:lm_head"]),
        moe_experts(QWEN3_30B,
                    [(1, 128), (8, 128), (32, 128), (128, 128), (512, 128), (2048, 128), (8192, 128), (16384, 128),
                     (64, 16), (1024, 16), (4096, 16), (16384, 16), (256, 32), (4096, 32), (16384, 8), (32768, 8)],
                    [(3, 2), (12, 2), (40, 2), (100, 2), (5, 4), (24, 4), (64, 4), (77, 4)]),
        moe_experts(NEMOTRON_NANO_MOE,
                    [(1, 128), (8, 128), (32, 128), (128, 128), (512, 128), (2048, 128), (8192, 128), (16384, 128),
                     (64, 16), (1024, 16), (4096, 16), (16384, 16), (256, 32), (4096, 32), (16384, 8), (32768, 8)],
                    [(3, 1), (12, 1), (40, 1), (100, 1), (5, 2), (24, 2), (64, 2), (77, 2)]),
        dequant_experts(QWEN3_30B_EXPERT),
    ]
