"""Training kernels (backward passes) of language models whose forward kernels the suite already has.

Training is about a fifth of SOL-ExecBench's problems and of this suite's: these are the recipes of
`l1/backward.py` and `l2.py` (RMSNorm, gated activation, cross-entropy, linear and attention backward) at the
published sizes of models `llm_breadth.py` uses, each a different width, vocabulary or head layout from the
backward problems already in the suite.
"""

from __future__ import annotations

from solbench.suite.draft import ProblemDraft
from suite_recipes import sweeps as sw
from suite_recipes.l1 import backward as bw
from suite_recipes.l2 import attention_backward, prefill
from suite_recipes.models import model

QWEN25_14B = model(
    "Qwen2.5-14B",
    "Qwen/Qwen2.5-14B",
    "language",
    {
        "hidden_size": 5120,
        "rms_norm_eps": 1e-05,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "derived.head_dim": 128,
    },
)
LLAMA_32_3B = model(
    "Llama-3.2-3B",
    "meta-llama/Llama-3.2-3B",
    "language",
    {
        "hidden_size": 3072,
        "rms_norm_eps": 1e-05,
        "intermediate_size": 8192,
        "hidden_act": "silu",
        "torch_dtype": "bfloat16",
    },
)
SMOLLM2 = model(
    "SmolLM2-1.7B",
    "HuggingFaceTB/SmolLM2-1.7B",
    "language",
    {"hidden_size": 2048, "rms_norm_eps": 1e-05, "vocab_size": 49152},
)
GEMMA2_27B = model(
    "Gemma-2-27B",
    "google/gemma-2-27b",
    "language",
    {
        "hidden_size": 4608,
        "rms_norm_eps": 1e-06,
        "intermediate_size": 36864,
        "hidden_act": "gelu_pytorch_tanh",
        "torch_dtype": "bfloat16",
        "vocab_size": 256000,
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "head_dim": 128,
    },
)
LLAMA_31_405B = model(
    "Llama-3.1-405B",
    "meta-llama/Llama-3.1-405B",
    "language",
    {
        "hidden_size": 16384,
        "rms_norm_eps": 1e-05,
        "intermediate_size": 53248,
        "hidden_act": "silu",
        "torch_dtype": "bfloat16",
    },
)
MISTRAL_LARGE = model(
    "Mistral-Large-Instruct-2411",
    "mistralai/Mistral-Large-Instruct-2411",
    "language",
    {"hidden_size": 12288, "rms_norm_eps": 1e-05, "vocab_size": 32768},
)
OLMO2_13B = model(
    "OLMo-2-1124-13B",
    "allenai/OLMo-2-1124-13B",
    "language",
    {"vocab_size": 100352, "num_attention_heads": 40, "num_key_value_heads": 40, "derived.head_dim": 128},
)
FALCON3_7B = model("Falcon3-7B-Base", "tiiuae/Falcon3-7B-Base", "language", {"vocab_size": 131072})

TOKENS = sw.per("num_tokens", sw.TRAIN_TOKENS)
VOCAB_CANDIDATES = sw.per("num_tokens", sorted(set(sw.VOCAB_TRAIN_TOKENS) | set(sw.VOCAB_ROWS)))
MANY_TOKENS = sw.per("num_tokens", sorted(set(sw.TRAIN_TOKENS) | set(sw.WIDE_TOKENS)))
"""Candidates for ops too wide for the last training sizes (`sweeps.fit` keeps 16 under 16 GB)."""
SMALL_SEQUENCES = dict(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 384, 255, 512))


def _attention_backward(m, head_dim_key: str) -> ProblemDraft:
    cpu = [dict(zip(SMALL_SEQUENCES, values)) for values in zip(*SMALL_SEQUENCES.values())]
    return attention_backward(m, cpu, head_dim_key=head_dim_key, gpu=prefill(m.config["num_attention_heads"]))


def _tokens(draft: ProblemDraft, gpu) -> ProblemDraft:
    return sw.tiered(draft, gpu, extra_tags=["kernel:training"])


def drafts() -> list[ProblemDraft]:
    rmsnorm = [
        _tokens(bw.rmsnorm_backward(m), TOKENS)
        for m in (QWEN25_14B, LLAMA_32_3B, SMOLLM2, GEMMA2_27B, LLAMA_31_405B, MISTRAL_LARGE)
    ]
    gated = [
        _tokens(d, sw.fit(MANY_TOKENS, d))
        for d in (bw.gated_activation_backward(m) for m in (LLAMA_32_3B, GEMMA2_27B, LLAMA_31_405B))
    ]
    cross_entropy = [
        _tokens(d, sw.fit(VOCAB_CANDIDATES, d))
        for d in (
            bw.cross_entropy_backward(m, tokens=(1, 4, 8, 16, 32, 64, 100, 128))
            for m in (SMOLLM2, OLMO2_13B, FALCON3_7B, GEMMA2_27B, MISTRAL_LARGE)
        )
    ]
    linear = [
        _tokens(
            bw.linear_backward(
                LLAMA_32_3B,
                what="down_proj (MLP output projection)",
                keys=("hidden_size", "intermediate_size"),
                in_features=8192,
                out_features=3072,
                dtype="bfloat16",
            ),
            TOKENS,
        )
    ]
    attention = [
        _attention_backward(QWEN25_14B, "derived.head_dim"),
        _attention_backward(OLMO2_13B, "derived.head_dim"),
        _attention_backward(GEMMA2_27B, "head_dim"),
    ]
    return rmsnorm + gated + cross_entropy + linear + attention
