"""FIB: inference primitives of LLM serving engines, in the style of FlashInfer-Bench.

Paged and ragged attention (GQA decode, prefill over packed sequences and over a paged cache with a
cached prefix, DeepSeek MLA decode, sliding-window decode with attention sinks), attention-state
merging, KV-cache append, RoPE at ragged positions, MoE routing / permutation / combine, sampling
(top-k/top-p, min-p, temperature, penalties, speculative verification) and the fused elementwise
kernels around them. Shapes are the real models' (heads, KV heads, head_dim, vocab, experts, ...);
the KV-cache page size 16 is a serving choice (vLLM / SGLang default block size), not a model value.

Structured inputs (page tables, ragged offsets, router logits, probabilities, uniforms) come from
each reference's ``make_inputs``; it builds them so that integer outputs cannot depend on ties or on
rounding: router scores are distinct and far apart, uniforms and top-p / min-p thresholds keep a
margin from every bucket edge.

KV-cache append (``append_paged_kv_cache``): the outputs are the written slots only, each new token's cache row
(``slot_indices`` = page * page_size + slot) and the K/V rows written there, not the updated cache. An append
writes a few rows of a cache hundreds of times larger, and returning the cache whole made the problem time (and
T_SOL charge) a copy of the cache. The other way the issue allows, declaring that an output may alias the cache
and updating it in place, needs a field upstream's definition format does not have, and solbench's evaluator
treats inputs as read-only (a solution that writes one is stopped as a reward hack) and charges T_SOL for
every output written whole; the written-slots form keeps the folder readable by upstream tools and makes both
correctness (every slot and row must match) and T_SOL (the append's rows read and written, the page-table
lookups) those of the append. Applying it, ``k_cache.view(-1, H, D)[slot_indices] = k_rows``, gives the
whole-cache result.

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads per problem (serving steps of 1-64k
tokens, decode batches of 1-128 over 1k-32k-token contexts in paged caches of up to 40k pages, prefill of 1k-64k
tokens over prefixes to 256k), ``workload.cpu.jsonl`` the recipes' small ones. The MoE combine backward is built
here but belongs to set L1 (FIB is forward only, as upstream's).
"""

from __future__ import annotations


from suite_recipes.builder import const, problem, tensor, var
from suite_recipes.models import model
from suite_recipes.sweeps import with_gpu_tier
from suite_recipes.shapes import tokens
from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for


# --- models --------------------------------------------------------------------------------------
QWEN3_MOE = model("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", "language",
                  {"num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": True, "hidden_size": 2048})
MIXTRAL = model("Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-v0.1", "language",
                {"num_experts": 8, "num_experts_per_tok": 2})
DSV2_LITE = model("DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V2-Lite", "language",
                  {"num_experts": 64, "num_experts_per_tok": 6, "norm_topk_prob": False, "scoring_func": "softmax",
                   "topk_method": "greedy"})


# --- shared generator code (pasted into the references that use it) ------------------------------


# --- paged GQA decode ----------------------------------------------------------------------------


# --- prefill: ragged KV and paged KV with a cached prefix ----------------------------------------


# --- MLA paged decode (DeepSeek, absorbed form) ---------------------------------------------------


# --- sliding-window decode with attention sinks (gpt-oss) -----------------------------------------


# --- attention-state merge (cascade / split-KV attention) -----------------------------------------


# --- KV-cache append ------------------------------------------------------------------------------


# --- RoPE at ragged positions with Llama-3.1 frequency scaling -------------------------------------


# --- MoE routing ----------------------------------------------------------------------------------
_SOFTMAX_TOPK = '''import torch

TOP_K = {top_k}
RENORMALIZE = {renorm}


@torch.no_grad()
def run(gating_output):
    acc = (torch.float64 if gating_output.dtype == torch.float64 else torch.float32)
    probs = torch.softmax(gating_output.to(acc), dim=-1)
    weights, ids = torch.topk(probs, TOP_K, dim=-1)        # sorted, largest first
    if RENORMALIZE:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, ids.to(torch.int32)


def make_inputs(axes, device):
    t, e = axes["num_tokens"], axes["num_experts"]
    # Router logits in [-3, 3) with distinct values at least 4.8/num_experts apart: top-k has no ties.
    ranks = torch.argsort(torch.rand(t, e), dim=-1).to(torch.float32)
    logits = (ranks + 0.2 * torch.rand(t, e)) * (6.0 / e) - 3.0
    return {{"gating_output": logits.to(device)}}
'''


def softmax_topk(m, name: str, rows: list[int]) -> ProblemDraft:
    e, k = m.config["num_experts"], m.config["num_experts_per_tok"]
    renorm = m.config.get("norm_topk_prob", True)  # Mixtral: softmax over the top-k logits, the same thing
    return problem(
        set="FIB", name=name, op_type="moe_routing", model=m,
        description=(f"{m.name} MoE router: softmax over num_experts={e} router logits, top-{k} experts "
                     f"(num_experts_per_tok) sorted by weight, "
                     + (("weights renormalised to sum to 1 (norm_topk_prob true)" if "norm_topk_prob" in m.config else
                         "weights renormalised to sum to 1 (Mixtral's softmax over the top-k logits)") if renorm else
                        "weights not renormalised (norm_topk_prob false)")
                     + " (vLLM fused_topk). Router logits are distinct so the chosen ids are unique."),
        axes={"num_tokens": var("Tokens routed"), "num_experts": const(e, "num_experts"),
              "top_k": const(k, "num_experts_per_tok")},
        inputs={"gating_output": tensor(["num_tokens", "num_experts"], "float32", "Router logits")},
        outputs={"topk_weights": tensor(["num_tokens", "top_k"], "float32"),
                 "topk_ids": tensor(["num_tokens", "top_k"], "int32", "Expert ids, < num_experts")},
        reference=_SOFTMAX_TOPK.format(top_k=k, renorm=renorm), workloads=[{"num_tokens": t} for t in rows],
        custom_inputs_entrypoint="make_inputs", tolerance=tolerance_for("float32", matched_ratio=1.0))


# --- sampling -------------------------------------------------------------------------------------


# --- fused elementwise kernels around attention and MLP -------------------------------------------


# --- the set ----------------------------------------------------------------------------------------
# --- GPU tier (workload.jsonl; the recipes' own small workloads become workload.cpu.jsonl) ------------
# Local sweeps (catalog/sweeps.py is written on another branch; the lead dedupes at merge).

SERVE_TOKENS = (1, 4, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384, 32768, 65536)
"""Tokens in a serving step, decode (1 per sequence) through chunked prefill budgets to a 64k-token prefill."""


def drafts() -> list[ProblemDraft]:
    return [
        with_gpu_tier(softmax_topk(MIXTRAL, "mixtral-8x7b_moe_softmax_topk_e8_k2",
                                   [1, 7, 32, 128, 255, 1024, 2048, 4096]), tokens(SERVE_TOKENS)),
        with_gpu_tier(softmax_topk(QWEN3_MOE, "qwen3-30b-a3b_moe_softmax_topk_e128_k8",
                                   [1, 7, 32, 128, 255, 1024, 2048, 4096]), tokens(SERVE_TOKENS)),
        with_gpu_tier(softmax_topk(DSV2_LITE, "deepseek-v2-lite_moe_softmax_topk_e64_k6",
                                   [1, 3, 16, 64, 100, 512, 1000, 4096]), tokens(SERVE_TOKENS)),
    ]
