"""FIB: MoE router softmax + top-k (vLLM ``fused_topk``) for three models, in the style of FlashInfer-Bench, from
``templates/fib/softmax_topk.py``.

The set's other problems (paged and ragged attention, KV-cache append, RoPE, sampling, fused elementwise
kernels ...) are hand-written folders, first made by this module (their provenance.json says so).

Router logits come from the reference's ``make_inputs``, distinct and far apart, so the chosen ids cannot depend
on ties. Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 serving steps of 1-64k tokens,
``workload.cpu.jsonl`` the recipes' small ones.
"""

from __future__ import annotations

from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for
from suite_recipes.builder import const, problem, tensor, var
from suite_recipes.models import model
from suite_recipes.shapes import tokens
from suite_recipes.sweeps import with_gpu_tier
from suite_recipes.template import render

# --- models --------------------------------------------------------------------------------------
QWEN3_MOE = model(
    "Qwen3-30B-A3B",
    "Qwen/Qwen3-30B-A3B",
    "language",
    {"num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": True, "hidden_size": 2048},
)
MIXTRAL = model(
    "Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-v0.1", "language", {"num_experts": 8, "num_experts_per_tok": 2}
)
DSV2_LITE = model(
    "DeepSeek-V2-Lite",
    "deepseek-ai/DeepSeek-V2-Lite",
    "language",
    {
        "num_experts": 64,
        "num_experts_per_tok": 6,
        "norm_topk_prob": False,
        "scoring_func": "softmax",
        "topk_method": "greedy",
    },
)


# --- MoE routing ----------------------------------------------------------------------------------


def softmax_topk(m, name: str, rows: list[int]) -> ProblemDraft:
    e, k = m.config["num_experts"], m.config["num_experts_per_tok"]
    renorm = m.config.get("norm_topk_prob", True)  # Mixtral: softmax over the top-k logits, the same thing
    return problem(
        set="FIB",
        name=name,
        op_type="moe_routing",
        model=m,
        description=(
            f"{m.name} MoE router: softmax over num_experts={e} router logits, top-{k} experts "
            f"(num_experts_per_tok) sorted by weight, "
            + (
                (
                    "weights renormalised to sum to 1 (norm_topk_prob true)"
                    if "norm_topk_prob" in m.config
                    else "weights renormalised to sum to 1 (Mixtral's softmax over the top-k logits)"
                )
                if renorm
                else "weights not renormalised (norm_topk_prob false)"
            )
            + " (vLLM fused_topk). Router logits are distinct so the chosen ids are unique."
        ),
        axes={
            "num_tokens": var("Tokens routed"),
            "num_experts": const(e, "num_experts"),
            "top_k": const(k, "num_experts_per_tok"),
        },
        inputs={"gating_output": tensor(["num_tokens", "num_experts"], "float32", "Router logits")},
        outputs={
            "topk_weights": tensor(["num_tokens", "top_k"], "float32"),
            "topk_ids": tensor(["num_tokens", "top_k"], "int32", "Expert ids, < num_experts"),
        },
        reference=render("fib/softmax_topk.py", TOP_K=k, RENORMALIZE=renorm),
        workloads=[{"num_tokens": t} for t in rows],
        custom_inputs_entrypoint="make_inputs",
        tolerance=tolerance_for("float32", matched_ratio=1.0),
    )


# --- GPU tier (workload.jsonl; the recipes' own small workloads become workload.cpu.jsonl) ------------

SERVE_TOKENS = (1, 4, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384, 32768, 65536)
"""Tokens in a serving step, decode (1 per sequence) through chunked prefill budgets to a 64k-token prefill."""


def drafts() -> list[ProblemDraft]:
    return [
        with_gpu_tier(
            softmax_topk(MIXTRAL, "mixtral-8x7b_moe_softmax_topk_e8_k2", [1, 7, 32, 128, 255, 1024, 2048, 4096]),
            tokens(SERVE_TOKENS),
        ),
        with_gpu_tier(
            softmax_topk(QWEN3_MOE, "qwen3-30b-a3b_moe_softmax_topk_e128_k8", [1, 7, 32, 128, 255, 1024, 2048, 4096]),
            tokens(SERVE_TOKENS),
        ),
        with_gpu_tier(
            softmax_topk(DSV2_LITE, "deepseek-v2-lite_moe_softmax_topk_e64_k6", [1, 3, 16, 64, 100, 512, 1000, 4096]),
            tokens(SERVE_TOKENS),
        ),
    ]
