"""Ops over the vocabulary or the experts: softmax, log-softmax, logit soft-capping, cross-entropy, argmax, routing."""

from __future__ import annotations

from suite_recipes.builder import const, problem, slug, tensor, uses, var
from suite_recipes.sweeps import per
from suite_recipes.shapes import TOKEN_SWEEP

_SOFTMAX = '''import torch


@torch.no_grad()
def run(logits):
    return torch.{function}(logits, dim=-1)
'''

_SOFTCAP = '''import torch


def make_inputs(axes_and_scalars, device):
    # Pre-cap logits of a trained LM span tens of units; N(0, 1) would leave tanh in its linear range.
    shape = (axes_and_scalars["num_tokens"], axes_and_scalars["vocab_size"])
    return {{"logits": (torch.randn(shape, device=device) * 15).to(torch.{dtype})}}


@torch.no_grad()
def run(logits):
    cap = {cap}
    return torch.tanh(logits / cap) * cap
'''

_CROSS_ENTROPY = '''import torch


@torch.no_grad()
def run(logits, labels):
    x = logits.to(torch.promote_types(logits.dtype, torch.float32))
    return torch.logsumexp(x, dim=-1) - x.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
'''

_ARGMAX = '''import torch


@torch.no_grad()
def run(logits):
    return torch.argmax(logits, dim=-1)
'''

_ROUTER = '''import torch


@torch.no_grad()
def run(router_logits):
    values, expert_ids = torch.topk(router_logits, {k}, dim=-1)
    return torch.softmax(values, dim=-1), expert_ids
'''

DECODE_ROWS = (1, 2, 8, 32, 64, 100, 128, 200)
"""Sequences in a sampling step (one logits row each); capped where the vocabulary is ~150k wide."""


def _vocab_axes(m, rows: str) -> dict:
    return {"num_tokens": var(rows), "vocab_size": const(m.config["vocab_size"], "vocab_size")}


def softmax(m, *, log: bool, rows=DECODE_ROWS):
    m = uses(m, "vocab_size")
    vocab = m.config["vocab_size"]
    function = "log_softmax" if log else "softmax"
    use = "log-probabilities of sampled tokens (RL, evaluation)" if log else "sampling probabilities"
    return problem("L1", m, f"{slug(m)}_{function.replace('_', '')}_v{vocab}", function,
              f"{m.name} {function} over the vocabulary (vocab_size {vocab}) of fp32 logits, for {use}.",
              axes=_vocab_axes(m, "Logit rows (sequences in a decode step)"),
              inputs={"logits": tensor(["num_tokens", "vocab_size"], "float32")},
              outputs={"output": tensor(["num_tokens", "vocab_size"], "float32")},
              reference=_SOFTMAX.format(function=function), workloads=per("num_tokens", rows),
              atol=None if log else 1e-12)


def final_logit_softcap(m):
    m = uses(m, "vocab_size", "final_logit_softcapping", "torch_dtype")
    cap, vocab, dtype = m.config["final_logit_softcapping"], m.config["vocab_size"], m.config["torch_dtype"]
    return problem("L1", m, f"{slug(m)}_logit_softcap_v{vocab}", "softcap",
              f"{m.name} final logit soft-capping tanh(logits / {cap}) * {cap} (final_logit_softcapping) over "
              f"vocab_size {vocab}, {dtype} logits (torch_dtype); inputs are spread like trained logits.",
              axes=_vocab_axes(m, "Logit rows"),
              inputs={"logits": tensor(["num_tokens", "vocab_size"], dtype)},
              outputs={"output": tensor(["num_tokens", "vocab_size"], dtype)},
              reference=_SOFTCAP.format(cap=cap, dtype=dtype), workloads=per("num_tokens", (1, 2, 4, 8, 16, 32, 48, 64)),
              custom_inputs_entrypoint="make_inputs")


def cross_entropy(m):
    m = uses(m, "vocab_size", "torch_dtype")
    vocab, dtype = m.config["vocab_size"], m.config["torch_dtype"]
    return problem("L1", m, f"{slug(m)}_cross_entropy_v{vocab}", "cross_entropy",
              f"{m.name} per-token cross-entropy loss (reduction none) over vocab_size {vocab}: logsumexp minus "
              f"the label's logit, from {dtype} logits (torch_dtype) computed in fp32.",
              axes=_vocab_axes(m, "Tokens in the training micro-batch chunk"),
              inputs={"logits": tensor(["num_tokens", "vocab_size"], dtype),
                      "labels": tensor(["num_tokens"], "int64", "Target token ids in [0, vocab_size)")},
              outputs={"loss": tensor(["num_tokens"], "float32")},
              reference=_CROSS_ENTROPY, workloads=per("num_tokens", (2, 8, 16, 64, 100, 128, 200, 256)))


def greedy_argmax(m):
    m = uses(m, "vocab_size")
    vocab = m.config["vocab_size"]
    return problem("L1", m, f"{slug(m)}_argmax_v{vocab}", "argmax",
              f"{m.name} greedy decoding: argmax over vocab_size {vocab} of fp32 logits (continuous random "
              "values, so no ties).",
              axes=_vocab_axes(m, "Sequences in the decode step"),
              inputs={"logits": tensor(["num_tokens", "vocab_size"], "float32")},
              outputs={"token_ids": tensor(["num_tokens"], "int64")},
              reference=_ARGMAX, workloads=per("num_tokens", (2, 4, 8, 32, 64, 128, 255, 512)))


def router_topk(m):
    renorm = "norm_topk_prob" in m.config
    m = uses(m, "num_experts", "num_experts_per_tok", *(["norm_topk_prob"] if renorm else []))
    experts, k = m.config["num_experts"], m.config["num_experts_per_tok"]
    how = ("softmax over all experts, top-k, renormalised (norm_topk_prob), which equals a softmax over the "
           "top-k logits; written so") if renorm else "top-k of the logits, then softmax over the k selected"
    return problem("L1", m, f"{slug(m)}_router_topk_e{experts}k{k}", "topk",
              f"{m.name} MoE router: pick num_experts_per_tok {k} of num_experts {experts} per token and their "
              f"weights ({how}). Router logits are fp32 so that the selection has no ties; ids must match exactly.",
              axes={"num_tokens": var("Tokens in the batch"), "num_experts": const(experts, "num_experts"),
                    "top_k": const(k, "num_experts_per_tok")},
              inputs={"router_logits": tensor(["num_tokens", "num_experts"], "float32")},
              outputs={"routing_weights": tensor(["num_tokens", "top_k"], "float32"),
                       "expert_ids": tensor(["num_tokens", "top_k"], "int64")},
              reference=_ROUTER.format(k=k), workloads=per("num_tokens", TOKEN_SWEEP), matched_ratio=1.0)
