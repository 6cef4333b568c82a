"""MoE routing kernels of two architectures the other recipes route differently.

- Kimi-K2 (``modeling_deepseek_v3.py``, ``DeepseekV3TopkRouter`` / ``DeepseekV3MoE.route_tokens_to_experts``,
  topk_method ``noaux_tc``): sigmoid scores, the experts chosen by score + ``e_score_correction_bias``
  (n_group 1: no group limit), the chosen experts' unbiased scores normalised to sum 1 and multiplied by
  routed_scaling_factor 2.827.
- Llama-4-Maverick (``modeling_llama4.py``, ``Llama4Router`` and ``Llama4TextMoe.forward``): top-1 of the
  router logits, a sigmoid of the chosen logit, and the token's hidden state scaled by it before the expert
  runs (the scale is applied to the expert's input, not its output).

Both take router logits as inputs (the router GEMM is a problem of its own) drawn so that no two choices
tie: each token's selection scores are a random permutation of evenly spaced values, at least 2e-3 apart
(an fp32 rounding cannot reorder them), so the chosen experts are one function of the inputs.
"""

from __future__ import annotations

from suite_recipes.l2 import body, draft
from suite_recipes.models import model
from suite_recipes.sweeps import TRAIN_TOKENS, WIDE_TOKENS, per, tiered
from solbench.suite.draft import ProblemDraft

KIMI_K2 = model("Kimi-K2-Instruct", "moonshotai/Kimi-K2-Instruct", "language",
                {"num_experts": 384, "num_experts_per_tok": 8, "n_group": 1, "topk_group": 1,
                 "norm_topk_prob": True, "routed_scaling_factor": 2.827})
LLAMA4_MAVERICK = model("Llama-4-Maverick-17B-128E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
                        "language", {"hidden_size": 5120, "num_experts": 128, "num_experts_per_tok": 1})

_CPU_TOKENS = (1, 7, 32, 100, 128, 255, 512, 1000)
_PERMUTED_GRID = ("torch.rand(shape, device=device).argsort(dim=-1).float() * (0.9 / shape[-1]) + 0.05")
"""Per row, a permutation of evenly spaced values in [0.05, 0.95): the selection scores."""

_NOAUX_TC = '''@torch.no_grad()
def run(e_score_correction_bias, router_logits):
    scores = router_logits.float().sigmoid()
    chosen = (scores + e_score_correction_bias).topk(@TOPK@, dim=-1, sorted=True).indices
    weights = scores.gather(1, chosen)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return chosen, weights * @SCALE@
'''


def noaux_tc_router(m) -> ProblemDraft:
    experts, topk, scale = m.config["num_experts"], m.config["num_experts_per_tok"], m.config["routed_scaling_factor"]
    bias = "torch.rand(shape, device=device) * 0.02 - 0.01"
    logits = f"torch.logit({_PERMUTED_GRID} - out['e_score_correction_bias'][None, :])"
    d = draft(
        m, f"{m.name}_moe_router_noaux_tc_e{experts}_top{topk}", "moe_routing",
        f"{m.name} MoE routing (topk_method noaux_tc, n_group 1): sigmoid of the router logits; the {topk} of "
        f"{experts} experts with the highest score + e_score_correction_bias, in descending order; their unbiased "
        f"scores normalised to sum 1 (norm_topk_prob) and scaled by routed_scaling_factor {scale}. Returns the "
        "expert ids and the weights.",
        {"num_tokens": (None, "tokens routed"), "num_experts": (experts, "num_experts")},
        {"e_score_correction_bias": (["num_experts"], "float32", bias),
         "router_logits": (["num_tokens", "num_experts"], "float32", logits)},
        {"topk_ids": (["num_tokens", "top_k"], "int64"), "topk_weights": (["num_tokens", "top_k"], "float32")},
        body(_NOAUX_TC), per("num_tokens", _CPU_TOKENS), subs={"TOPK": topk, "SCALE": scale})
    d.axes["top_k"] = {"type": "const", "value": topk, "description": "num_experts_per_tok"}
    gpu = per("num_tokens", (*WIDE_TOKENS[:-2], 131072, 262144))
    return tiered(d, gpu, set="L1", extra_tags=["family:moe", "kernel:noaux_tc_router"])


_TOP1_SIGMOID = '''@torch.no_grad()
def run(hidden_states, router_logits):
    top_logit, expert = router_logits.max(dim=-1)
    gate = top_logit.float().sigmoid()
    return expert, (hidden_states.float() * gate[:, None]).to(hidden_states.dtype)
'''


def top1_sigmoid_router(m) -> ProblemDraft:
    hidden, experts = m.config["hidden_size"], m.config["num_experts"]
    d = draft(
        m, f"{m.name}_moe_top1_sigmoid_scale_h{hidden}_e{experts}", "moe_routing",
        f"{m.name} MoE routing (num_experts_per_tok 1): the expert with the highest router logit of {experts}, and "
        f"the token's hidden state (hidden_size {hidden}) scaled by the sigmoid of that logit, the input the chosen "
        "expert receives. Returns the expert id per token and the scaled hidden states.",
        {"num_tokens": (None, "tokens routed"), "hidden_size": (hidden, "hidden_size"),
         "num_experts": (experts, "num_experts")},
        {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "router_logits": (["num_tokens", "num_experts"], "float32", f"({_PERMUTED_GRID} - 0.5) * 8.0")},
        {"expert_ids": (["num_tokens"], "int64"), "routed_input": (["num_tokens", "hidden_size"], "bfloat16")},
        body(_TOP1_SIGMOID), per("num_tokens", _CPU_TOKENS))
    return tiered(d, per("num_tokens", TRAIN_TOKENS), set="L1", extra_tags=["family:moe", "kernel:top1_sigmoid_router"])


def drafts() -> list[ProblemDraft]:
    return [noaux_tc_router(KIMI_K2), top1_sigmoid_router(LLAMA4_MAVERICK)]
