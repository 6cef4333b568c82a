"""Quant: NVFP4 linear layers of real models with their fused epilogues (split, residual, bias + GELU, squared
ReLU + quantise), forward only, from ``templates/nvfp4/linear.py``.

NVFP4 as NVIDIA's ModelOpt checkpoints store it and TensorRT-LLM / FlashInfer / vLLM serve it: E2M1 values
packed two per byte (``float4_e2m1fn_x2``, element 2i in the low nibble), one E4M3 scale per 16 elements
along K, and a per-tensor fp32 scale (a weight's ``weight_scale_2``, an activation's static
``input_scale``, both *decode* scales: value = code x block scale x per-tensor scale). Activations are
quantised inside the block as ``fp4_quantize`` does; the GEMM is ``alpha * (a x a_sf) @ (w x w_sf)^T`` with
``alpha = input_scale * weight_scale_2`` (vLLM ``ModelOptNvFp4LinearMethod``, FlashInfer ``mm_fp4``), fp32
accumulation. Every dimension is a published value of the model's record in model-configs.json; where a layer
is a tensor-parallel shard, the shard is a real function (column-parallel outputs, a vocabulary shard).

The other NVFP4 problems this module first made (norm / activation + quantise, the gated MLP, MoE experts,
dequantisation, KV-cache quantisation) are hand-written folders now.

Two tiers: ``workload.jsonl`` holds 16 serving-scale workloads (decode to 32k-token prefill chunks),
``workload.cpu.jsonl`` 8 small ones that run well under a second.
"""

from __future__ import annotations

from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for
from suite_recipes.builder import const, expr, problem, slug, tensor, var
from suite_recipes.models import model
from suite_recipes.shapes import tokens
from suite_recipes.template import render

FAMILY = "family:nvfp4"
BF16 = tolerance_for("bfloat16")
GEMM_QUANT_TOLERANCE = {"max_atol": 1e-6, "max_rtol": 1e-5, "required_matched_ratio": 0.99}
"""A GEMM's output quantised: summation order moves a bf16 value across an FP4 rounding boundary more often."""

# --- sweeps ---------------------------------------------------------------------------------------------
GEMM_TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
"""Tokens per forward: decode batches through 32k-token prefill chunks."""
CPU_GEMM_TOKENS = (3, 5, 7, 12, 24, 40, 77, 96)

# --- models (every value copied from model-configs.json) -----------------------------------------------
LLAMA_8B = model(
    "Llama-3.1-8B",
    "meta-llama/Llama-3.1-8B",
    "language",
    {
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "hidden_act": "silu",
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "derived.head_dim": 128,
    },
)
NEMOTRON_H = model(
    "Nemotron-H-56B-Base-8K",
    "nvidia/Nemotron-H-56B-Base-8K",
    "language",
    {"hidden_size": 8192, "intermediate_size": 32768, "mlp_hidden_act": "relu2", "mlp_bias": False},
)
QWEN3_8B = model(
    "Qwen3-8B",
    "Qwen/Qwen3-8B",
    "language",
    {"hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128, "attention_bias": False},
)
WAN_13B = model("Wan2.1-T2V-1.3B", "Wan-AI/Wan2.1-T2V-1.3B", "video", {"dim": 1536, "ffn_dim": 8960})
NEMOTRON_NANO_MAMBA = model(
    "NVIDIA-Nemotron-3-Nano-30B-A3B",
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "language",
    {"hidden_size": 2688, "mamba_num_heads": 64, "mamba_head_dim": 64, "mamba_proj_bias": False},
)
MAMBA2 = model(
    "Mamba2-2.7B",
    "state-spaces/mamba2-2.7b",
    "language",
    {"hidden_size": 2560, "ssm_state_size": 128, "n_groups": 1, "derived.d_inner": 5120, "derived.mamba_num_heads": 80},
)
PHI35_MINI = model(
    "Phi-3.5-mini-instruct",
    "microsoft/Phi-3.5-mini-instruct",
    "language",
    {"hidden_size": 3072, "vocab_size": 32064, "tie_word_embeddings": False},
)

# --- reference building blocks (pasted into every reference) --------------------------------------------


TOKENS = var("Tokens in the forward (batch x sequence)")


def _weight_inputs(prefix: str, rows: str, k_packed: str, k_blocks: str, lead: tuple = ()) -> dict:
    return {
        f"{prefix}weight": tensor([*lead, rows, k_packed], "float4_e2m1fn_x2", "E2M1 codes, two per byte"),
        f"{prefix}weight_scale": tensor([*lead, rows, k_blocks], "float8_e4m3fn", "one E4M3 scale per 16 along K"),
        f"{prefix}weight_scale_2": tensor(list(lead) or ["one"], "float32", "per-tensor decode scale"),
    }


def _packed_axes(k_name: str, k_value: int, what: str) -> dict:
    return {
        k_name: const(k_value, what),
        f"{k_name}_packed": expr(f"{k_name} // 2"),
        f"{k_name}_blocks": expr(f"{k_name} // 16"),
    }


# ================================================================================================
# Norm / activation + quantise (no weights)


# ================================================================================================
# NVFP4 linear layers with fused epilogues
_EPILOGUES = {
    "plain": ("", "", "    return y.to(x.dtype)\n"),
    "split": ("", "", "    return tuple(part.to(x.dtype) for part in torch.split(y, SPLIT, dim=-1))\n"),
    "residual": (
        '    out["residual"] = torch.randn(t, n, device=device).to(torch.bfloat16)\n',
        ", residual",
        "    return (y + residual.to(y.dtype)).to(x.dtype)\n",
    ),
    "bias_gelu": (
        '    out["bias"] = (0.02 * torch.randn(n, device=device)).to(torch.bfloat16)\n',
        ", bias",
        '    return F.gelu(y + bias.to(y.dtype), approximate="tanh").to(x.dtype)\n',
    ),
    "relu2_quant": (
        '    out["output_scale"] = _static_scale(16.0, device)\n',
        ", output_scale",
        "    return _quantize(torch.relu(y.to(x.dtype).to(y.dtype)).square(), output_scale)\n",
    ),
}
"""Per epilogue: the lines make_inputs adds, the extra arguments of run, and its return statement."""


def _linear_reference(epilogue: str, split: tuple = ()) -> str:
    extra, extra_args, tail = _EPILOGUES[epilogue]
    return render(
        "nvfp4/linear.py",
        SPLIT=f"SPLIT = {list(split)!r}\n" if split else "",
        EXTRA=extra,
        EXTRA_ARGS=extra_args,
        RETURN=tail,
    )


def nvfp4_linear(
    m,
    name: str,
    op_type: str,
    description: str,
    k: int,
    n: int,
    *,
    epilogue: str = "plain",
    split: dict | None = None,
    tags=(),
    gpu=GEMM_TOKENS,
    cpu=CPU_GEMM_TOKENS,
) -> ProblemDraft:
    """x [T, K] bf16 -> an NVFP4 linear (activation quantised inside) -> the epilogue's outputs."""
    inputs = {
        "x": tensor(["num_tokens", "in_features"], "bfloat16"),
        "input_scale": tensor(["one"], "float32", "static decode scale of x"),
        **_weight_inputs("", "out_features", "in_features_packed", "in_features_blocks"),
    }
    axes = {
        "num_tokens": TOKENS,
        **_packed_axes("in_features", k, "K"),
        "out_features": const(n, "N"),
        "one": const(1, "per-tensor"),
    }
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
        outputs = {
            "y_fp4": tensor(["num_tokens", "out_features_packed"], "float4_e2m1fn_x2"),
            "y_sf": tensor(["num_tokens", "out_features_blocks"], "float8_e4m3fn"),
        }
    else:
        outputs = {"y": tensor(["num_tokens", "out_features"], "bfloat16")}
        if epilogue == "residual":
            inputs["residual"] = tensor(["num_tokens", "out_features"], "bfloat16")
        if epilogue == "bias_gelu":
            inputs["bias"] = tensor(["out_features"], "bfloat16")
    tolerance = GEMM_QUANT_TOLERANCE if epilogue == "relu2_quant" else BF16
    return problem(
        "Quant",
        m,
        f"{slug(m)}_{name}",
        op_type,
        description,
        axes=axes,
        inputs=inputs,
        outputs=outputs,
        reference=_linear_reference(epilogue, tuple(split.values()) if split else ()),
        gpu=tokens(gpu),
        workloads=tokens(cpu),
        tolerance=tolerance,
        tags=[FAMILY, "kernel:gemm_fp4", *tags],
        custom_inputs_entrypoint="make_inputs",
    )


# ================================================================================================
# Gated MLP (two GEMMs, the intermediate re-quantised)


# ================================================================================================
# MoE experts with the routing given (flashinfer cutlass_fused_moe / TensorRT-LLM NVFP4 MoE)


# ================================================================================================
# Dequantisation of expert weights (the emulation path of GPUs without FP4 tensor cores)


# ================================================================================================
def drafts() -> list[ProblemDraft]:
    llama_qkv = (LLAMA_8B.config["num_attention_heads"] + 2 * LLAMA_8B.config["num_key_value_heads"]) * LLAMA_8B.config[
        "derived.head_dim"
    ]
    q_out = QWEN3_8B.config["num_attention_heads"] * QWEN3_8B.config["head_dim"]
    d_inner, state = MAMBA2.config["derived.d_inner"], MAMBA2.config["ssm_state_size"]
    groups, mheads = MAMBA2.config["n_groups"], MAMBA2.config["derived.mamba_num_heads"]
    in_proj = 2 * d_inner + 2 * groups * state + mheads
    nano_inner = NEMOTRON_NANO_MAMBA.config["mamba_num_heads"] * NEMOTRON_NANO_MAMBA.config["mamba_head_dim"]
    nemo_i = NEMOTRON_H.config["intermediate_size"] // 8
    vocab_shard = PHI35_MINI.config["vocab_size"] // 4
    return [
        nvfp4_linear(
            LLAMA_8B,
            f"nvfp4_qkv_proj_h4096_n{llama_qkv}",
            "gemm_fp4",
            f"Llama-3.1-8B attention qkv_proj in NVFP4: hidden_size 4096 -> (num_attention_heads 32 + 2 x "
            f"num_key_value_heads 8) x head_dim 128 = {llama_qkv}, one fused GEMM whose output is split into q "
            "[num_tokens, 4096], k and v [num_tokens, 1024] (bf16). The activation is quantised with the "
            "layer's static input_scale; alpha = input_scale x weight_scale_2; fp32 accumulation.",
            4096,
            llama_qkv,
            epilogue="split",
            split={"q": 4096, "k": 1024, "v": 1024},
            tags=["family:attention"],
        ),
        nvfp4_linear(
            QWEN3_8B,
            f"nvfp4_o_proj_residual_h{q_out}",
            "gemm_fp4",
            f"Qwen3-8B attention o_proj in NVFP4 (attention_bias false) fused with the residual add: the "
            f"attention output [num_tokens, num_attention_heads 32 x head_dim 128 = {q_out}] is quantised with "
            "the static input_scale, multiplied by the NVFP4 weight (-> hidden_size 4096), and the residual is "
            "added in fp32 before the one bf16 rounding.",
            q_out,
            4096,
            epilogue="residual",
            tags=["family:attention"],
        ),
        nvfp4_linear(
            WAN_13B,
            "nvfp4_ffn_fc1_gelu_d1536_f8960",
            "gemm_fp4",
            "Wan2.1-T2V-1.3B DiT feed-forward first layer in NVFP4 with its epilogue: nn.Linear(dim 1536, ffn_dim "
            "8960) with bias, then GELU(approximate='tanh') (WanAttentionBlock.ffn), bias and GELU applied in fp32 "
            "to the GEMM result before the one bf16 rounding. Tokens are video latent patches (patch_size "
            "[1, 2, 2]: a 480x832 81-frame clip is 21 x 30 x 52 = 32,760 tokens).",
            1536,
            8960,
            epilogue="bias_gelu",
            gpu=(
                1024,
                1560,
                2048,
                3120,
                4096,
                6240,
                8192,
                9360,
                12480,
                16384,
                18720,
                24576,
                32760,
                40960,
                49140,
                65520,
            ),
        ),
        nvfp4_linear(
            NEMOTRON_H,
            f"nvfp4_up_proj_relu2_quant_h8192_i{nemo_i}_tp8",
            "gemm_fp4",
            f"Nemotron-H-56B MLP layer ('-' in hybrid_override_pattern) in NVFP4, tensor-parallel shard TP=8: "
            f"up_proj hidden_size 8192 -> intermediate_size 32768 / 8 = {nemo_i} (mlp_bias false, column-parallel), "
            "with the epilogue the down_proj needs: the bf16 result goes through mlp_hidden_act relu2 "
            "(relu(x)^2, in fp32) and is quantised to NVFP4 with down_proj's static input_scale (output_scale). "
            "Codes and block scales must match on 99% of elements (a GEMM accumulated in another order may move "
            "a bf16 value across a rounding boundary).",
            8192,
            nemo_i,
            epilogue="relu2_quant",
        ),
        nvfp4_linear(
            MAMBA2,
            f"nvfp4_mamba2_in_proj_h2560_n{in_proj}",
            "gemm_fp4",
            f"Mamba2-2.7B mixer in_proj in NVFP4: hidden_size 2560 -> 2 x d_inner 5120 + 2 x n_groups 1 x "
            f"ssm_state_size 128 + nheads 80 = {in_proj} (no bias), split as Mamba2.forward does into z "
            f"[num_tokens, 5120], xBC [num_tokens, {d_inner + 2 * groups * state}] (for the causal conv1d) and dt "
            f"[num_tokens, {mheads}].",
            2560,
            in_proj,
            epilogue="split",
            split={"z": d_inner, "xBC": d_inner + 2 * groups * state, "dt": mheads},
            tags=["family:ssm"],
        ),
        nvfp4_linear(
            NEMOTRON_NANO_MAMBA,
            f"nvfp4_mamba2_out_proj_k{nano_inner}_h2688",
            "gemm_fp4",
            f"NVIDIA-Nemotron-3-Nano-30B-A3B Mamba2 mixer out_proj in NVFP4: mamba_num_heads 64 x mamba_head_dim 64 "
            f"= {nano_inner} -> hidden_size 2688 (mamba_proj_bias false), applied to the gated RMSNorm's output.",
            nano_inner,
            2688,
            tags=["family:ssm"],
        ),
        nvfp4_linear(
            PHI35_MINI,
            f"nvfp4_lm_head_v{vocab_shard}_tp4",
            "gemm_fp4",
            f"Phi-3.5-mini-instruct lm_head in NVFP4 (ModelOpt can quantise the untied lm_head; tie_word_embeddings "
            f"false), vocabulary-parallel shard TP=4: hidden_size 3072 -> vocab_size 32064 / 4 = {vocab_shard} "
            "logits of this rank (gathered afterwards), bf16; all positions, as for prompt logprobs.",
            3072,
            vocab_shard,
            tags=["kernel:lm_head"],
        ),
    ]
