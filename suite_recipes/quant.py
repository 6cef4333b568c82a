"""Quant: FP8 linear layers with per-tensor scales (``torch._scaled_mm`` / ``cutlass_scaled_mm`` semantics) for
four layers of real models, from ``templates/quant/fp8_per_tensor_gemm.py``.

The reference dequantizes explicitly and computes in fp32 (the golden run in fp64), so the SOL layer counts the
matmul at the rate of the precision its operands were dequantized from; quantized inputs come from
``make_inputs``, random data quantized as the serving stack would. The set's other problems (quantizers, block
and row-wise GEMMs, MoE, MXFP4, INT8/INT4, FP8 KV cache and attention, training) are hand-written folders.

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads per problem, ``workload.cpu.jsonl`` the
recipes' small ones.
"""

from __future__ import annotations

from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for
from suite_recipes.builder import const, problem, tensor, var
from suite_recipes.models import model
from suite_recipes.shapes import tokens
from suite_recipes.sweeps import tiered, with_gpu_tier
from suite_recipes.template import render

BF16 = tolerance_for("bfloat16")

# ------------------------------------------------------------------------------------------------
# Models (every value copied from model-configs.json)
LLAMA_8B = model(
    "Llama-3.1-8B",
    "meta-llama/Llama-3.1-8B",
    "language",
    {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "derived.head_dim": 128},
)
FLUX_DEV = model(
    "FLUX.1-dev (transformer)", "black-forest-labs/FLUX.1-dev", "diffusion", {"hidden_size": 3072, "num_heads": 24}
)

# ------------------------------------------------------------------------------------------------
# Reference building blocks (pasted into the references that use them)


TOKENS = var("Tokens in the batch (batch x sequence)")


# ================================================================================================
# FP8 quantizers


# ================================================================================================
# FP8 block-scaled GEMM (DeepSeek-V3 style)


# ================================================================================================
# FP8 MoE grouped GEMM with block scales (contiguous layout: rows sorted by expert)


# ================================================================================================
# FP8 per-tensor and rowwise scaled GEMM


def fp8_per_tensor_gemm(m, name: str, k: int, n: int, what: str, sweep, axis_description=None) -> ProblemDraft:
    return problem(
        set="Quant",
        name=name,
        op_type="gemm_fp8",
        model=m,
        description=(
            f"{m.name} FP8 linear with per-tensor scales ({what}): out[M, {n}] = (a * a_scale) @ "
            f"(b * b_scale)^T, K = {k}; e4m3 activations and weight, one fp32 scale each (static, "
            "calibrated: torch._scaled_mm / cutlass_scaled_mm semantics), fp32 accumulation, bf16 output."
        ),
        axes={
            "num_tokens": var(axis_description) if axis_description else TOKENS,
            "in_features": const(k, "K"),
            "out_features": const(n, "N"),
            "one": const(1, "per-tensor"),
        },
        inputs={
            "a": tensor(["num_tokens", "in_features"], "float8_e4m3fn"),
            "a_scale": tensor(["one"], "float32"),
            "b": tensor(["out_features", "in_features"], "float8_e4m3fn"),
            "b_scale": tensor(["one"], "float32"),
        },
        outputs={"out": tensor(["num_tokens", "out_features"], "bfloat16")},
        reference=render("quant/fp8_per_tensor_gemm.py"),
        custom_inputs_entrypoint="make_inputs",
        workloads=tokens(sweep),
        tolerance=BF16,
    )


# ================================================================================================
# NVFP4, MXFP4, MXFP8


# ================================================================================================
# INT8 (SmoothQuant W8A8) and INT4 weight-only (AWQ, GPTQ)


# ================================================================================================
# FP8 KV cache and attention


# ================================================================================================
# FP8 training: backward GEMMs and quantize-for-backward


# ================================================================================================
# GPU tier (workload.jsonl): upstream's scale; the recipes' own small workloads become workload.cpu.jsonl.

SERVE_TOKENS = (1, 4, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384, 32768, 65536)
"""Tokens in a serving step: decode batches through chunked-prefill budgets to a 64k-token prefill."""
FLUX_IMAGE_TOKENS = (
    256,
    1024,
    2304,
    4096,
    6144,
    8192,
    9216,
    12288,
    16384,
    18432,
    24576,
    32768,
    36864,
    49152,
    65536,
    73728,
)
"""batch x (H/16) x (W/16): 256 px to 2048 px images (256-16384 tokens each), batches of 1-16."""


NEMOTRON_NANO = model(
    "NVIDIA-Nemotron-3-Nano-30B-A3B",
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "language",
    {
        "hidden_size": 2688,
        "chunk_size": 128,
        "conv_kernel": 4,
        "mamba_head_dim": 64,
        "mamba_num_heads": 64,
        "n_groups": 8,
        "ssm_state_size": 128,
        "layer_norm_eps": 1e-05,
    },
)
MAMBA2_GEMM_TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)


def fp8_mamba2_projections(m) -> list[ProblemDraft]:
    """The Mamba2 mixer's in_proj and out_proj as FP8 per-tensor GEMMs (Nemotron-3-Nano dims), tagged with the
    state-space family."""
    hidden, heads, p = m.config["hidden_size"], m.config["mamba_num_heads"], m.config["mamba_head_dim"]
    g, n = m.config["n_groups"], m.config["ssm_state_size"]
    d_inner = heads * p
    in_out = 2 * d_inner + 2 * g * n + heads
    sweep = (1, 2, 8, 16, 64, 128, 255, 512)
    in_proj = fp8_per_tensor_gemm(
        m,
        f"nemotron-3-nano_fp8_mamba2_in_proj_n{in_out}",
        hidden,
        in_out,
        f"Mamba2 mixer in_proj: hidden_size {hidden} -> z, xBC and dt = 2 x {d_inner} (mamba_num_heads x "
        f"mamba_head_dim) + 2 x n_groups {g} x ssm_state_size {n} + {heads} heads = {in_out}",
        sweep,
    )
    out_proj = fp8_per_tensor_gemm(
        m,
        f"nemotron-3-nano_fp8_mamba2_out_proj_k{d_inner}",
        d_inner,
        hidden,
        f"Mamba2 mixer out_proj: the gated-norm output {d_inner} (mamba_num_heads x mamba_head_dim) -> "
        f"hidden_size {hidden}",
        sweep,
    )
    return [
        tiered(
            d,
            tokens(MAMBA2_GEMM_TOKENS),
            min_count=1,
            high=0,
            shift="batch",
            set="Quant",
            extra_tags=["family:ssm", "kernel:mamba2_projection"] + list(d.extra_tags),
        )
        for d in (in_proj, out_proj)
    ]


def drafts() -> list[ProblemDraft]:
    gpu = tokens(SERVE_TOKENS)
    return [
        with_gpu_tier(
            fp8_per_tensor_gemm(
                LLAMA_8B,
                "llama31_8b_fp8_per_tensor_gemm_qkv_tp2",
                4096,
                3072,
                "fused qkv_proj, TP=2 shard: hidden_size 4096 -> (32 + 2 x 8) / 2 heads x "
                "128 = 3072, as in the Llama-3.1-8B-Instruct-FP8 checkpoints",
                (1, 2, 16, 64, 128, 255, 512, 1000),
            ),
            gpu,
        ),
        with_gpu_tier(
            fp8_per_tensor_gemm(
                FLUX_DEV,
                "flux1_dev_fp8_per_tensor_gemm_attn_proj",
                3072,
                3072,
                "image-stream attention output projection hidden_size 3072 -> 3072 (24 "
                "heads x 128) of a double-stream block, FP8 e4m3 checkpoint",
                (256, 512, 576, 1024, 1296, 1536, 2048, 2304),
                axis_description="Image tokens: batch x (H/16) x (W/16) latent patches",
            ),
            tokens(FLUX_IMAGE_TOKENS),
        ),
        *fp8_mamba2_projections(NEMOTRON_NANO),
    ]
