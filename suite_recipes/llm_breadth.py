"""Attention prefill and decode cores, attention blocks, MoE routers and MoE experts of language models, from
the templates under ``templates/llm/`` (L2's shorthand, `l2.draft`, makes the inputs).

Each problem follows its model's code in transformers 5 (``models/<x>/modeling_<x>.py``; the function is
named in the problem's description). Values cited in ``config:`` tags are the published ones; where a problem
needs a value the record lacks (OLMo-3's sliding window) the description says where it comes from. The other
problems this module first made (RoPE and KV-cache writes, DeepSeek-V3.2's sparse MLA and indexer, RWKV-5 ...) are
hand-written folders now.

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads per problem (prefill 1k-32k
tokens per sequence, decode contexts 1k-32k, token batches to 64k), ``workload.cpu.jsonl`` 8 small ones
that run through the evaluator on a 2-core CPU. Const axes (weights, heads) are the same in both tiers,
so the larger models' weights are tensor- or expert-parallel shards that are real functions of one rank
(no residual or norm over a sharded dimension: the partial sum before the all-reduce is the output).

MoE routing is tie-safe: router logits are fp32 (computed by an fp32 GEMM, or an fp32 input), and
routers return dense per-expert weights, so a near-tie flip moves two entries of one row, within the
99% matched ratio.
"""

from __future__ import annotations

import dataclasses

from solbench.suite.draft import ProblemDraft
from suite_recipes.l2 import draft
from suite_recipes.models import model
from suite_recipes.sweeps import tiered

# --- models (values copied from solbench/suite/data/model-configs.json) ----------------------------------------

QWEN25_14B = model(
    "Qwen2.5-14B",
    "Qwen/Qwen2.5-14B",
    "language",
    {"num_attention_heads": 40, "num_key_value_heads": 8, "derived.head_dim": 128},
)
QWEN25_32B = model(
    "Qwen2.5-32B",
    "Qwen/Qwen2.5-32B",
    "language",
    {"num_attention_heads": 40, "num_key_value_heads": 8, "derived.head_dim": 128},
)
QWEN25_72B = model(
    "Qwen2.5-72B",
    "Qwen/Qwen2.5-72B",
    "language",
    {
        "hidden_size": 8192,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "derived.head_dim": 128,
        "rope_theta": 1000000,
        "attention_bias": True,
    },
)
LLAMA_32_3B = model(
    "Llama-3.2-3B",
    "meta-llama/Llama-3.2-3B",
    "language",
    {"num_attention_heads": 24, "num_key_value_heads": 8, "head_dim": 128},
)
LLAMA_31_405B = model(
    "Llama-3.1-405B",
    "meta-llama/Llama-3.1-405B",
    "language",
    {
        "hidden_size": 16384,
        "num_attention_heads": 128,
        "num_key_value_heads": 8,
        "derived.head_dim": 128,
        "rope_theta": 500000.0,
        "rope_scaling.factor": 8.0,
        "rope_scaling.low_freq_factor": 1.0,
        "rope_scaling.high_freq_factor": 4.0,
        "rope_scaling.original_max_position_embeddings": 8192,
    },
)
SMOLLM2 = model(
    "SmolLM2-1.7B",
    "HuggingFaceTB/SmolLM2-1.7B",
    "language",
    {"num_attention_heads": 32, "num_key_value_heads": 32, "derived.head_dim": 64},
)
GEMMA2_27B = model(
    "Gemma-2-27B",
    "google/gemma-2-27b",
    "language",
    {
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "head_dim": 128,
        "attn_logit_softcapping": 50.0,
        "query_pre_attn_scalar": 144,
        "sliding_window": 4096,
    },
)
FALCON_180B = model(
    "Falcon-180B",
    "tiiuae/falcon-180B",
    "language",
    {"num_attention_heads": 232, "num_key_value_heads": 8, "derived.head_dim": 64},
)
FALCON_7B = model(
    "Falcon-7B",
    "tiiuae/falcon-7b",
    "language",
    {"num_attention_heads": 71, "num_key_value_heads": 1, "derived.head_dim": 64},
)
FALCON3_7B = model(
    "Falcon3-7B-Base",
    "tiiuae/Falcon3-7B-Base",
    "language",
    {"num_attention_heads": 12, "num_key_value_heads": 4, "derived.head_dim": 256},
)
LLAMA4_SCOUT = model(
    "Llama-4-Scout-17B-16E-Instruct",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "language",
    {
        "hidden_size": 5120,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "attention_chunk_size": 8192,
        "rope_theta": 500000.0,
        "rope_scaling.factor": 16.0,
        "rope_scaling.low_freq_factor": 1.0,
        "rope_scaling.high_freq_factor": 1.0,
        "rope_scaling.original_max_position_embeddings": 8192,
        "rms_norm_eps": 1e-05,
        "num_experts": 16,
        "num_experts_per_tok": 1,
        "intermediate_size": 8192,
    },
)
OLMO2_32B = model(
    "OLMo-2-0325-32B",
    "allenai/OLMo-2-0325-32B",
    "language",
    {
        "hidden_size": 5120,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "derived.head_dim": 128,
        "rms_norm_eps": 1e-06,
        "rope_theta": 500000.0,
    },
)
OLMO3_7B = model(
    "OLMo-3-7B",
    "allenai/Olmo-3-7B-RLZero-Code",
    "language",
    {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "derived.head_dim": 128,
        "max_position_embeddings": 65536,
    },
)
GRANITE_8B = model(
    "Granite-3.2-8B-Instruct",
    "ibm-granite/granite-3.2-8b-instruct",
    "language",
    {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "derived.head_dim": 128,
        "attention_multiplier": 0.0078125,
        "residual_multiplier": 0.22,
        "rms_norm_eps": 1e-05,
        "rope_theta": 10000000.0,
    },
)
GLM47 = model(
    "GLM-4.7",
    "zai-org/GLM-4.7",
    "language",
    {
        "hidden_size": 5120,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "partial_rotary_factor": 0.5,
        "rope_theta": 1000000,
        "num_experts": 160,
        "num_experts_per_tok": 8,
        "n_group": 1,
        "topk_group": 1,
        "n_shared_experts": 1,
        "moe_intermediate_size": 1536,
        "norm_topk_prob": True,
        "routed_scaling_factor": 2.5,
    },
)
QWEN3_CODER = model(
    "Qwen3-Coder-480B-A35B-Instruct",
    "Qwen/Qwen3-Coder-480B-A35B-Instruct",
    "language",
    {
        "hidden_size": 6144,
        "num_experts": 160,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 2560,
        "norm_topk_prob": True,
    },
)
MIXTRAL_8X22B = model(
    "Mixtral-8x22B-v0.1",
    "mistralai/Mixtral-8x22B-v0.1",
    "language",
    {"hidden_size": 6144, "intermediate_size": 16384, "num_experts": 8, "num_experts_per_tok": 2},
)
DEEPSEEK_V32 = model(
    "DeepSeek-V3.2",
    "deepseek-ai/DeepSeek-V3.2",
    "language",
    {
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "kv_lora_rank": 512,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "q_lora_rank": 1536,
        "rms_norm_eps": 1e-06,
        "index_n_heads": 64,
        "index_head_dim": 128,
        "index_topk": 2048,
        "num_experts": 256,
        "num_experts_per_tok": 8,
        "n_group": 8,
        "topk_group": 4,
        "n_shared_experts": 1,
        "moe_intermediate_size": 2048,
        "routed_scaling_factor": 2.5,
        "norm_topk_prob": True,
        "rope_theta": 10000,
        "rope_scaling.factor": 40,
        "rope_scaling.beta_fast": 32,
        "rope_scaling.beta_slow": 1,
        "rope_scaling.mscale_all_dim": 1.0,
        "rope_scaling.original_max_position_embeddings": 4096,
    },
)


def _cite(m, *keys):
    """The model with only the config values this problem uses (its ``config:`` tags)."""
    return dataclasses.replace(m, config={k: m.config[k] for k in keys})


# --- sweeps (GPU tier: upstream scale, 16 workloads; CPU tier: 8 small ones) ---------------------------------------

PREFILL = (
    (1, 1024),
    (1, 2048),
    (2, 1024),
    (1, 4096),
    (4, 1024),
    (2, 4096),
    (1, 8192),
    (8, 1024),
    (4, 4096),
    (2, 8192),
    (1, 16384),
    (8, 4096),
    (4, 8192),
    (2, 16384),
    (1, 32768),
    (8, 8192),
)
"""(batch, prompt length): 1k-32k tokens per sequence, up to 64k tokens."""
PREFILL_SHORT = (
    (1, 1024),
    (2, 1024),
    (1, 2048),
    (4, 1024),
    (1, 3072),
    (2, 2048),
    (1, 4096),
    (8, 1024),
    (4, 2048),
    (2, 4096),
    (1, 6144),
    (8, 2048),
    (4, 4096),
    (1, 8192),
    (2, 8192),
    (4, 8192),
)
"""For references that materialise the [heads, seq, seq] score matrix (soft-capping): at most 8k per sequence."""
DECODE = (
    (1, 1024),
    (8, 1024),
    (32, 1024),
    (64, 1024),
    (128, 1024),
    (1, 4096),
    (8, 4096),
    (32, 4096),
    (64, 4096),
    (1, 8192),
    (16, 8192),
    (32, 8192),
    (1, 16384),
    (8, 16384),
    (1, 32768),
    (8, 32768),
)
"""(batch, context): decode steps over 1k-32k cached tokens."""
DECODE_ONE_KV_HEAD = (
    (1, 1024),
    (8, 1024),
    (64, 1024),
    (256, 1024),
    (1, 4096),
    (16, 4096),
    (64, 4096),
    (256, 4096),
    (1, 8192),
    (32, 8192),
    (128, 8192),
    (1, 16384),
    (16, 16384),
    (128, 16384),
    (1, 32768),
    (64, 32768),
)
"""Larger batches for a rank that caches one KV head (256 bytes per token at head_dim 64)."""
TOKENS = (1, 4, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768, 65536)
TOKENS_MOE = (1, 4, 16, 64, 128, 256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 32768)

CPU_PREFILL = ((1, 16), (1, 33), (2, 64), (1, 128), (2, 100), (1, 255), (1, 384), (2, 256))
CPU_DECODE = ((1, 64), (2, 128), (4, 256), (1, 1000), (8, 64), (2, 512), (3, 333), (1, 2048))
CPU_TOKENS = (1, 3, 16, 64, 100, 128, 255, 512)
CPU_MOE_TOKENS = (4, 7, 16, 64, 100, 128, 255, 512)
"""At least 4 tokens, so the routing differs between the input sets validate draws."""


def _seqs(pairs, first="batch_size", second="seq_len"):
    return [{first: a, second: b} for a, b in pairs]


def _tok(values, axis="num_tokens"):
    return [{axis: v} for v in values]


def _tiers(d: ProblemDraft, set_name: str, gpu, cpu, families, kernel: str) -> ProblemDraft:
    """The set, ``family:``/``kernel:`` tags and the two tiers (`sweeps.tiered`; a CPU workload the GPU tier also
    has moves one step along its batch axis)."""
    tags = [f"family:{f}" for f in families] + [f"kernel:{kernel}"]
    return tiered(
        dataclasses.replace(d, cpu_workloads=list(cpu)),
        gpu,
        shift="batch",
        set=set_name,
        extra_tags=tags + list(d.extra_tags),
    )


# --- reference helpers (appended to l2's _acc, _rmsnorm, _rotate_half, _rope_tables) ------------------------------


def _bf(shape, std=1.0, mean=None):
    return (shape, "bfloat16", std) if mean is None else (shape, "bfloat16", std, mean)


# ================================================ L1: attention cores ==============================================


def attention_prefill(
    m,
    name: str,
    kernel: str,
    text: str,
    *,
    heads,
    kv_heads,
    d,
    gpu,
    scale=None,
    softcap=None,
    window=None,
    chunk=None,
    cite=(),
) -> ProblemDraft:
    """Causal (GQA) attention over a prompt: q [B, Hq, S, D], k/v [B, Hkv, S, D] -> o [B, Hq, S, D]."""
    axes = {
        "batch_size": (None, "sequences"),
        "seq_len": (None, "prompt length"),
        "num_heads": (heads, "query heads"),
        "num_kv_heads": (kv_heads, "key/value heads"),
        "head_dim": (d, "head_dim"),
    }
    inputs = {
        "query": _bf(["batch_size", "num_heads", "seq_len", "head_dim"]),
        "key": _bf(["batch_size", "num_kv_heads", "seq_len", "head_dim"]),
        "value": _bf(["batch_size", "num_kv_heads", "seq_len", "head_dim"]),
    }
    if softcap is None and window is None and chunk is None:
        template, values = "llm/attention_prefill.py", {"SCALE_ARG": f", scale={scale!r}" if scale else ""}
    else:
        mask = "pos[None, :] <= pos[:, None]"
        if window:
            mask += f" & (pos[:, None] - pos[None, :] < {window})"
        if chunk:
            mask += f" & (pos[:, None] // {chunk} == pos[None, :] // {chunk})"
        cap = f"        scores = torch.tanh(scores / {softcap!r}) * {softcap!r}\n" if softcap else ""
        template = "llm/attention_prefill_masked.py"
        values = {"MASK": mask, "CAP": cap, "SCALE": scale if scale else d**-0.5}
    d_ = draft(
        _cite(m, *cite),
        name,
        "attention_prefill",
        text,
        axes,
        inputs,
        {"output": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16")},
        template,
        _seqs(CPU_PREFILL),
        values=values,
    )
    return _tiers(d_, "L1", _seqs(gpu), _seqs(CPU_PREFILL), ["attention"], kernel)


def attention_decode(
    m,
    name: str,
    kernel: str,
    text: str,
    *,
    heads,
    kv_heads,
    d,
    scale=None,
    softcap=None,
    window=None,
    cite=(),
    gpu=DECODE,
) -> ProblemDraft:
    """One new token per sequence attends to its whole KV cache (the new token's k/v already appended)."""
    axes = {
        "batch_size": (None, "sequences decoding"),
        "context_len": (None, "cached tokens, the new one included"),
        "num_heads": (heads, "query heads"),
        "num_kv_heads": (kv_heads, "key/value heads"),
        "head_dim": (d, "head_dim"),
    }
    inputs = {
        "query": _bf(["batch_size", "num_heads", "head_dim"]),
        "k_cache": _bf(["batch_size", "num_kv_heads", "context_len", "head_dim"]),
        "v_cache": _bf(["batch_size", "num_kv_heads", "context_len", "head_dim"]),
    }
    if window:
        template, values = "llm/attention_decode_window.py", {"WINDOW": window, "SCALE": scale, "CAP": softcap}
        cpu = ((1, 4096), (2, 4096), (1, 4097), (2, 5000), (1, 6000), (3, 4500), (1, 8192), (4, 4200))
        constraints = [f"context_len >= {window}"]
        gpu = [p for p in DECODE if p[1] >= window] + [
            (2, 4096),
            (4, 8192),
            (64, 8192),
            (128, 4096),
            (256, 4096),
            (128, 8192),
            (16, 32768),
        ]
    else:
        template, values = "llm/attention_decode.py", {"SCALE_ARG": f", scale={scale!r}" if scale else ""}
        cpu, constraints = CPU_DECODE, []
    d_ = draft(
        _cite(m, *cite),
        name,
        "attention_decode",
        text,
        axes,
        inputs,
        {"output": (["batch_size", "num_heads", "head_dim"], "bfloat16")},
        template,
        _seqs(cpu, second="context_len"),
        values=values,
    )
    d_ = dataclasses.replace(d_, constraints=constraints)
    return _tiers(d_, "L1", _seqs(gpu, second="context_len"), _seqs(cpu, second="context_len"), ["attention"], kernel)


# ============================================ L1: routers ==========================================================


def router(
    m,
    name,
    kernel,
    text,
    *,
    kind,
    experts,
    topk,
    hidden,
    cite,
    groups=1,
    topk_group=1,
    scale=1.0,
    weight_dtype="bfloat16",
) -> ProblemDraft:
    inputs = {
        "hidden_states": _bf(["num_tokens", "hidden_size"]),
        "gate_weight": (["num_experts", "hidden_size"], weight_dtype, hidden**-0.5),
    }
    if kind == "sigmoid":
        inputs["e_score_correction_bias"] = (["num_experts"], "float32", 0.05)
        template = "llm/router_sigmoid.py"
        values = {"TOPK": topk, "GROUPS": groups, "TOPK_GROUP": topk_group, "SCALE": float(scale)}
    else:
        template = "llm/router_softmax.py" if kind == "softmax" else "llm/router_top1_sigmoid.py"
        values = {"TOPK": topk}
    d_ = draft(
        _cite(m, *cite),
        name,
        "moe_router",
        text,
        {
            "num_tokens": (None, "tokens"),
            "hidden_size": (hidden, "hidden_size"),
            "num_experts": (experts, "num_experts"),
        },
        inputs,
        {
            "routing_weights": (["num_tokens", "num_experts"], "float32"),
            "router_logits": (["num_tokens", "num_experts"], "float32"),
        },
        template,
        _tok(CPU_TOKENS),
        values=values,
    )
    return _tiers(d_, "L1", _tok(TOKENS), _tok(CPU_TOKENS), ["moe"], kernel)


# ============================================ L2: MoE experts ======================================================

_LOCAL_FIRST_IDS = (
    "(lambda first: torch.cat([(first + j * (a['num_experts'] // shape[1])) % a['num_experts'] "
    "for j in range(shape[1])], dim=1))(torch.randint(0, a['local_experts'], (shape[0], 1), "
    "device=device))"
)
"""Expert ids of tokens dispatched to this rank: slot 0 is a local expert (0..local_experts-1), the other slots
are spread over all experts at stride num_experts // top_k, so a token's ids are distinct. Integer arithmetic
only, so the analyser can follow the routing at GPU scale."""


def moe_experts(
    m,
    name,
    kernel,
    text,
    *,
    kind,
    hidden,
    experts,
    local,
    inter,
    topk,
    cite,
    shared_inter=0,
    groups=1,
    topk_group=1,
    scale=1.0,
) -> ProblemDraft:
    args = ["hidden_states", "topk_ids", "topk_weights", "w_gate", "w_up", "w_down"]
    weights = {
        "softmax": "torch.rand(shape, device=device) * 0.5 + 0.1",
        "sigmoid": f"torch.rand(shape, device=device) * {0.5 * scale!r} + {0.05 * scale!r}",
        "llama4": "torch.sigmoid(torch.randn(shape, device=device) + 1.0)",
    }[kind]
    inputs = {
        "hidden_states": _bf(["num_tokens", "hidden_size"]),
        "topk_ids": (["num_tokens", "top_k"], "int32", _LOCAL_FIRST_IDS),
        "topk_weights": (["num_tokens", "top_k"], "float32", weights),
    }
    inputs.update(
        {
            "w_gate": _bf(["local_experts", "intermediate_shard", "hidden_size"], hidden**-0.5),
            "w_up": _bf(["local_experts", "intermediate_shard", "hidden_size"], hidden**-0.5),
            "w_down": _bf(["local_experts", "hidden_size", "intermediate_shard"], inter**-0.5),
        }
    )
    axes = {
        "num_tokens": (None, "tokens dispatched to this rank"),
        "hidden_size": (hidden, "hidden_size"),
        "num_experts": (experts, "num_experts"),
        "local_experts": (local, "experts on this expert-parallel rank"),
        "top_k": (topk, "num_experts_per_tok"),
        "intermediate_shard": (inter, "expert intermediate size on this tensor-parallel rank"),
    }
    shared = ""
    if shared_inter:
        args += ["shared_gate", "shared_up", "shared_down"]
        axes["shared_shard"] = (shared_inter, "shared expert intermediate size on this rank")
        inputs.update(
            {
                "shared_gate": _bf(["shared_shard", "hidden_size"], hidden**-0.5),
                "shared_up": _bf(["shared_shard", "hidden_size"], hidden**-0.5),
                "shared_down": _bf(["hidden_size", "shared_shard"], shared_inter**-0.5),
            }
        )
        shared = (
            "    s = F.linear(F.silu(F.linear(hidden_states, shared_gate)) * F.linear(hidden_states, shared_up),"
            " shared_down)\n    out = out + s.to(acc)\n"
        )
    template = "llm/moe_experts_scaled_input.py" if kind == "llama4" else "llm/moe_experts.py"
    values = {"SHARED_ARGS": "".join(", " + a for a in args[6:]), "SHARED": shared}
    text += (
        " Routing arrives as the fused-experts kernel's inputs (vLLM fused_experts, TensorRT-LLM's MoE "
        "plugin): topk_ids [tokens, top_k] and fp32 topk_weights; the tokens are those dispatched to this rank "
        "(slot 0 names a local expert), so the selection itself cannot tie here."
    )
    d_ = draft(
        _cite(m, *cite),
        name,
        "moe",
        text,
        axes,
        inputs,
        {"output": (["num_tokens", "hidden_size"], "bfloat16")},
        template,
        _tok(CPU_MOE_TOKENS),
        values=values,
    )
    return _tiers(d_, "L2", _tok(TOKENS_MOE), _tok(CPU_MOE_TOKENS), ["moe"], kernel)


# ============================================ L2: attention blocks =================================================


def _attention_lines(window, scale_arg: str) -> str:
    """The block's attention call: causal, or causal within a sliding window (OLMo-3)."""
    if not window:
        return f"    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True{scale_arg})\n"
    return (
        "    pos = torch.arange(s, device=x.device)\n"
        f"    mask = (pos[None, :] <= pos[:, None]) & (pos[:, None] - pos[None, :] < {window})\n"
        f"    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True{scale_arg})\n"
    )


def attention_block(
    m,
    name,
    kernel,
    text,
    *,
    hidden,
    heads,
    kv_heads,
    d,
    inv_freq,
    cite,
    bias=False,
    qk_norm=False,
    pre_norm=False,
    post_norm=False,
    residual=None,
    window=None,
    scale=None,
    eps=1e-6,
    gpu=PREFILL,
    extra_families=(),
    qk_gain=1.0,
) -> ProblemDraft:
    """Self-attention sublayer over a prompt: projections, RoPE, causal GQA, o_proj (+ the model's norms/residual)."""
    args = ["hidden_states", "q_proj", "k_proj", "v_proj", "o_proj"]
    inputs = {
        "hidden_states": _bf(["batch_size", "seq_len", "hidden_size"]),
        "q_proj": _bf(["q_dim", "hidden_size"], qk_gain * hidden**-0.5),
        "k_proj": _bf(["kv_dim", "hidden_size"], qk_gain * hidden**-0.5),
        "v_proj": _bf(["kv_dim", "hidden_size"], hidden**-0.5),
        "o_proj": _bf(["hidden_size", "q_dim"], (heads * d) ** -0.5),
    }
    if bias:
        args += ["q_bias", "k_bias", "v_bias"]
        inputs.update({"q_bias": _bf(["q_dim"], 0.1), "k_bias": _bf(["kv_dim"], 0.1), "v_bias": _bf(["kv_dim"], 0.1)})
    if pre_norm:
        args.append("input_norm")
        inputs["input_norm"] = _bf(["hidden_size"], 0.1, 1.0)
    if qk_norm:
        args += ["q_norm", "k_norm"]
        inputs.update({"q_norm": _bf(["q_dim"], 0.1, 1.0), "k_norm": _bf(["kv_dim"], 0.1, 1.0)})
    if post_norm:
        args.append("post_norm")
        inputs["post_norm"] = _bf(["hidden_size"], 0.1, 1.0)
    values = {
        "EXTRA_ARGS": "".join(", " + a for a in args[5:]),
        "D": d,
        "INV_FREQ": inv_freq,
        "PRENORM": f"_rmsnorm(hidden_states, input_norm, {eps!r})" if pre_norm else "hidden_states",
        "QKNORM": f"    q = _rmsnorm(q, q_norm, {eps!r})\n    k = _rmsnorm(k, k_norm, {eps!r})\n" if qk_norm else "",
        "ATTN": _attention_lines(window, f", scale={scale!r}" if scale else ""),
    }
    for key, arg in (("QB", "q_bias"), ("KB", "k_bias"), ("VB", "v_bias")):
        values[key] = f", {arg}" if bias else ""
    post = ""
    if post_norm:
        post += f"    out = _rmsnorm(out, post_norm, {eps!r})\n"
    if residual is not None:
        post += f"    out = (hidden_states.to(acc) + out.to(acc) * {float(residual)!r}).to(hidden_states.dtype)\n"
    values["POST"] = post
    d_ = draft(
        _cite(m, *cite),
        name,
        "attention_block",
        text,
        {
            "batch_size": (None, "sequences"),
            "seq_len": (None, "prompt length"),
            "hidden_size": (hidden, "hidden_size"),
            "q_dim": (heads * d, f"{heads} query heads x head_dim {d}"),
            "kv_dim": (kv_heads * d, f"{kv_heads} key/value heads x head_dim {d}"),
        },
        inputs,
        {"output": (["batch_size", "seq_len", "hidden_size"], "bfloat16")},
        "llm/attention_block.py",
        _seqs(CPU_PREFILL),
        values=values,
    )
    return _tiers(d_, "L2", _seqs(gpu), _seqs(CPU_PREFILL), ["attention", *extra_families], kernel)


def _plain_inv_freq(d, theta):
    return f"1.0 / ({float(theta)!r} ** (torch.arange(0, {d}, 2, device=x.device, dtype=torch.float64) / {d}))"


# ============================================ the problems =========================================================


def _l1_attention() -> list[ProblemDraft]:
    g2 = GEMMA2_27B.config
    g2_scale = g2["query_pre_attn_scalar"] ** -0.5
    return [
        attention_prefill(
            QWEN25_14B,
            "qwen25-14b_gqa_prefill_h40kv8_d128",
            "flash_attention_prefill",
            "Qwen2.5-14B causal grouped-query attention over a prompt (Qwen2Attention.forward in transformers' "
            "modeling_qwen2.py, sdpa path): num_attention_heads 40 share num_key_value_heads 8, head_dim 128 "
            "(hidden_size / heads), scale head_dim^-0.5; q/k already rotated.",
            heads=40,
            kv_heads=8,
            d=128,
            gpu=PREFILL,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim"),
        ),
        attention_decode(
            QWEN25_32B,
            "qwen25-32b_gqa_decode_h40kv8_d128",
            "flash_attention_decode",
            "Qwen2.5-32B decode attention (Qwen2Attention.forward with a KV cache, one new token per sequence): "
            "num_attention_heads 40 over num_key_value_heads 8 cached heads, head_dim 128, every cached position "
            "visible.",
            heads=40,
            kv_heads=8,
            d=128,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim"),
        ),
        attention_decode(
            LLAMA_32_3B,
            "llama-32-3b_gqa_decode_h24kv8_d128",
            "flash_attention_decode",
            "Llama-3.2-3B decode attention (LlamaAttention.forward in transformers' modeling_llama.py with a KV "
            "cache): num_attention_heads 24 over num_key_value_heads 8, head_dim 128 (3 query heads per KV head).",
            heads=24,
            kv_heads=8,
            d=128,
            cite=("num_attention_heads", "num_key_value_heads", "head_dim"),
        ),
        attention_prefill(
            SMOLLM2,
            "smollm2-17b_mha_prefill_h32_d64",
            "flash_attention_prefill",
            "SmolLM2-1.7B causal multi-head attention over a prompt (LlamaAttention.forward, MHA: "
            "num_attention_heads 32 = num_key_value_heads 32, head_dim 64).",
            heads=32,
            kv_heads=32,
            d=64,
            gpu=PREFILL,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim"),
        ),
        attention_prefill(
            GEMMA2_27B,
            "gemma-2-27b_softcap_sliding_prefill_h32kv16_d128",
            "softcap_sliding_window_attention",
            "Gemma-2-27B local-attention layer over a prompt (Gemma2Attention.forward and eager_attention_forward in "
            "transformers' modeling_gemma2.py): scores scaled by query_pre_attn_scalar^-0.5 = 144^-0.5 (not "
            "head_dim^-0.5), soft-capped tanh(s / 50) x 50 (attn_logit_softcapping 50.0), causal within a "
            "sliding_window of 4096 positions; num_attention_heads 32 over num_key_value_heads 16, head_dim 128.",
            heads=32,
            kv_heads=16,
            d=128,
            gpu=PREFILL_SHORT,
            scale=g2_scale,
            softcap=g2["attn_logit_softcapping"],
            window=g2["sliding_window"],
            cite=(
                "num_attention_heads",
                "num_key_value_heads",
                "head_dim",
                "attn_logit_softcapping",
                "query_pre_attn_scalar",
                "sliding_window",
            ),
        ),
        attention_decode(
            GEMMA2_27B,
            "gemma-2-27b_softcap_sliding_decode_h32kv16_d128",
            "softcap_sliding_window_decode",
            "Gemma-2-27B local-attention layer, one decode step (Gemma2Attention.forward with a sliding-window "
            "cache): the new token sees the last sliding_window 4096 cached positions; scores scaled by "
            "query_pre_attn_scalar^-0.5 = 144^-0.5 and soft-capped tanh(s / 50) x 50; num_attention_heads 32 over "
            "num_key_value_heads 16, head_dim 128.",
            heads=32,
            kv_heads=16,
            d=128,
            scale=g2_scale,
            softcap=g2["attn_logit_softcapping"],
            window=g2["sliding_window"],
            cite=(
                "num_attention_heads",
                "num_key_value_heads",
                "head_dim",
                "attn_logit_softcapping",
                "query_pre_attn_scalar",
                "sliding_window",
            ),
        ),
        attention_decode(
            FALCON_180B,
            "falcon-180b_gqa_decode_tp8_h29kv1_d64",
            "flash_attention_decode",
            "Falcon-180B decode attention on one tensor-parallel rank (FalconAttention.forward in transformers' "
            "modeling_falcon.py, new_decoder_architecture, KV cache): num_attention_heads 232 and "
            "num_key_value_heads 8 split over TP=8 give 29 query heads sharing 1 KV head per rank, head_dim 64.",
            heads=29,
            kv_heads=1,
            d=64,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim"),
            gpu=DECODE_ONE_KV_HEAD,
        ),
        attention_prefill(
            FALCON_7B,
            "falcon-7b_mqa_prefill_h71kv1_d64",
            "flash_attention_prefill",
            "Falcon-7B causal multi-query attention over a prompt (FalconAttention.forward in transformers' "
            "modeling_falcon.py, multi_query): num_attention_heads 71 share num_key_value_heads 1, head_dim 64.",
            heads=71,
            kv_heads=1,
            d=64,
            gpu=PREFILL,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim"),
        ),
        attention_prefill(
            FALCON3_7B,
            "falcon3-7b-base_gqa_prefill_h12kv4_d256",
            "flash_attention_prefill",
            "Falcon3-7B-Base causal grouped-query attention with head_dim 256 (a Llama-architecture model: "
            "LlamaAttention.forward): num_attention_heads 12 over num_key_value_heads 4.",
            heads=12,
            kv_heads=4,
            d=256,
            gpu=PREFILL,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim"),
        ),
        attention_prefill(
            LLAMA4_SCOUT,
            "llama-4-scout-17b-16e-instruct_chunked_attention_prefill_h40kv8_d128",
            "chunked_attention",
            "Llama-4-Scout chunked local attention over a prompt (the RoPE layers of Llama4TextModel: "
            "create_chunked_causal_mask in transformers' masking_utils): a token attends causally only within its "
            "attention_chunk_size 8192 chunk; num_attention_heads 40 over num_key_value_heads 8, head_dim 128 "
            "(q/k already rotated and L2-normalised). CPU-tier prompts are shorter than a chunk.",
            heads=40,
            kv_heads=8,
            d=128,
            gpu=PREFILL_SHORT[:13] + ((1, 12288), (2, 10240), (1, 16384)),
            chunk=LLAMA4_SCOUT.config["attention_chunk_size"],
            cite=("num_attention_heads", "num_key_value_heads", "head_dim", "attention_chunk_size"),
        ),
    ]


def _l1_rope_and_routing() -> list[ProblemDraft]:
    return [
        router(
            QWEN3_CODER,
            "qwen3-coder-480b-a35b-instruct_router_softmax_top8_e160",
            "moe_router_softmax_topk",
            "Qwen3-Coder-480B-A35B router (Qwen3MoeSparseMoeBlock / Qwen3MoeTopKRouter in transformers' "
            "modeling_qwen3_moe.py): gate logits over num_experts 160, softmax, top-8 (num_experts_per_tok), "
            "renormalised (norm_topk_prob). The gate GEMM is accumulated and kept in fp32 (bf16-rounded logits tie "
            "at the top-8 cut for a few percent of tokens, so the selection would depend on expert order). Returns "
            "the dense routing weights (zero for unselected experts) and the logits.",
            kind="softmax",
            experts=160,
            topk=8,
            hidden=6144,
            cite=("hidden_size", "num_experts", "num_experts_per_tok", "norm_topk_prob"),
        ),
        router(
            GLM47,
            "glm-47_router_sigmoid_noaux_top8_e160",
            "moe_router_sigmoid_noaux",
            "GLM-4.7 router (Glm4MoeTopkRouter.forward in transformers' modeling_glm4_moe.py): fp32 gate GEMM over "
            "num_experts 160, sigmoid scores, experts chosen by score + e_score_correction_bias (n_group 1, "
            "topk_group 1: no group stage), top-8 (num_experts_per_tok), the chosen raw scores renormalised "
            "(norm_topk_prob) and times routed_scaling_factor 2.5. Returns dense routing weights and the logits.",
            kind="sigmoid",
            experts=160,
            topk=8,
            hidden=5120,
            weight_dtype="float32",
            scale=2.5,
            cite=(
                "hidden_size",
                "num_experts",
                "num_experts_per_tok",
                "n_group",
                "topk_group",
                "norm_topk_prob",
                "routed_scaling_factor",
            ),
        ),
        router(
            DEEPSEEK_V32,
            "deepseek-v32_router_group_top8_e256_g8",
            "moe_router_grouped_topk",
            "DeepSeek-V3.2 router (noaux_tc; DeepseekV3TopkRouter / DeepseekV3MoE.route_tokens_to_experts in "
            "transformers): fp32 gate GEMM over num_experts 256, sigmoid scores + e_score_correction_bias; the "
            "experts form n_group 8 groups ranked by the sum of their top-2 biased scores, only topk_group 4 groups "
            "stay eligible, top-8 (num_experts_per_tok) of those; weights are the raw sigmoid scores renormalised "
            "(norm_topk_prob) times routed_scaling_factor 2.5. Returns dense routing weights and the logits.",
            kind="sigmoid",
            experts=256,
            topk=8,
            hidden=7168,
            weight_dtype="float32",
            groups=8,
            topk_group=4,
            scale=2.5,
            cite=(
                "hidden_size",
                "num_experts",
                "num_experts_per_tok",
                "n_group",
                "topk_group",
                "norm_topk_prob",
                "routed_scaling_factor",
            ),
        ),
        router(
            LLAMA4_SCOUT,
            "llama-4-scout-17b-16e-instruct_router_sigmoid_top1_e16",
            "moe_router_top1_sigmoid",
            "Llama-4-Scout router (Llama4Router.forward in transformers' modeling_llama4.py): gate logits over "
            "num_experts 16 (fp32 here), top-1 (num_experts_per_tok), the chosen expert's score is sigmoid(logit) "
            "(no softmax; the others are sigmoid(-inf) = 0). Returns dense routing scores and the logits.",
            kind="llama4",
            experts=16,
            topk=1,
            hidden=5120,
            cite=("hidden_size", "num_experts", "num_experts_per_tok"),
        ),
        router(
            MIXTRAL_8X22B,
            "mixtral-8x22b-v01_router_softmax_top2_e8",
            "moe_router_softmax_topk",
            "Mixtral-8x22B router (MixtralSparseMoeBlock / MixtralTopKRouter in transformers' modeling_mixtral.py): "
            "gate logits over num_experts 8 (accumulated and kept in fp32), softmax, top-2 (num_experts_per_tok), "
            "renormalised. Returns the dense routing weights and the logits.",
            kind="softmax",
            experts=8,
            topk=2,
            hidden=6144,
            cite=("hidden_size", "num_experts", "num_experts_per_tok"),
        ),
    ]


def _l2() -> list[ProblemDraft]:
    q72, l405 = QWEN25_72B.config, LLAMA_31_405B.config
    llama3 = (
        f"_llama3_inv_freq(128, {float(l405['rope_theta'])!r}, {float(l405['rope_scaling.factor'])!r}, "
        f"{float(l405['rope_scaling.low_freq_factor'])!r}, {float(l405['rope_scaling.high_freq_factor'])!r}, "
        f"{l405['rope_scaling.original_max_position_embeddings']}, x.device)"
    )
    return [
        attention_block(
            QWEN25_72B,
            "qwen25-72b_attention_block_tp8_h8kv1_d128",
            "attention_block",
            "Qwen2.5-72B self-attention sublayer for prefill on one tensor-parallel rank (Qwen2Attention.forward in "
            "transformers' modeling_qwen2.py): q/k/v projections with biases (attention_bias), rotate-half RoPE "
            "(rope_theta 1000000, positions 0..seq_len-1), causal GQA, o_proj. TP=8: 8 of num_attention_heads 64 and "
            "1 of num_key_value_heads 8 per rank, head_dim 128; the output is the rank's partial o_proj sum before "
            "the all-reduce (hidden_size 8192).",
            hidden=8192,
            heads=8,
            kv_heads=1,
            d=128,
            inv_freq=_plain_inv_freq(128, q72["rope_theta"]),
            bias=True,
            cite=(
                "hidden_size",
                "num_attention_heads",
                "num_key_value_heads",
                "derived.head_dim",
                "rope_theta",
                "attention_bias",
            ),
        ),
        attention_block(
            LLAMA_31_405B,
            "llama-31-405b_attention_block_tp8_h16kv1_d128",
            "attention_block",
            "Llama-3.1-405B self-attention sublayer for prefill on one tensor-parallel rank (LlamaAttention.forward "
            "in transformers' modeling_llama.py): q/k/v projections, RoPE with llama3 frequency scaling (rope_theta "
            "500000, factor 8, low/high_freq_factor 1/4, original_max_position_embeddings 8192), causal GQA, o_proj. "
            "TP=8: 16 of num_attention_heads 128 and 1 of num_key_value_heads 8 per rank, head_dim 128; the output is "
            "the rank's partial o_proj sum before the all-reduce (hidden_size 16384).",
            hidden=16384,
            heads=16,
            kv_heads=1,
            d=128,
            inv_freq=llama3,
            extra_families=("rope_kv",),
            cite=(
                "hidden_size",
                "num_attention_heads",
                "num_key_value_heads",
                "derived.head_dim",
                "rope_theta",
                "rope_scaling.factor",
                "rope_scaling.low_freq_factor",
                "rope_scaling.high_freq_factor",
                "rope_scaling.original_max_position_embeddings",
            ),
        ),
        attention_block(
            OLMO2_32B,
            "olmo-2-0325-32b_postnorm_qknorm_attention_h40kv8_d128",
            "attention_block",
            "OLMo-2-0325-32B attention sublayer with its residual (Olmo2Attention.forward and "
            "Olmo2DecoderLayer.forward in transformers' modeling_olmo2.py): q_norm/k_norm are RMSNorms over the whole "
            "projected q (40 x 128 = 5120) and k (8 x 128) before the heads are split; rotate-half RoPE (rope_theta "
            "500000); causal GQA (num_attention_heads 40, num_key_value_heads 8, head_dim 128); o_proj; then the "
            "post-norm: x + post_attention_layernorm(attn) (rms_norm_eps 1e-6). The whole layer on one device (the "
            "norms span every head, so a head shard would not be a real function).",
            hidden=5120,
            heads=40,
            kv_heads=8,
            d=128,
            inv_freq=_plain_inv_freq(128, OLMO2_32B.config["rope_theta"]),
            qk_norm=True,
            post_norm=True,
            residual=1.0,
            eps=1e-06,
            cite=(
                "hidden_size",
                "num_attention_heads",
                "num_key_value_heads",
                "derived.head_dim",
                "rms_norm_eps",
                "rope_theta",
            ),
        ),
        attention_block(
            OLMO3_7B,
            "olmo-3-7b_sliding_postnorm_attention_h32_d128",
            "attention_block",
            "OLMo-3-7B sliding-attention layer with its residual (Olmo3Attention.forward and Olmo3DecoderLayer in "
            "transformers' modeling_olmo3.py; 24 of its 32 layers, layer_types 3 sliding : 1 full): q/k RMSNorm over "
            "the whole projection, RoPE with the default (unscaled) frequencies the sliding layers use (YaRN applies "
            "to the full-attention layers only) and rope_theta 500000, causal attention within sliding_window 4096 "
            "(MHA: num_attention_heads 32 = num_key_value_heads 32, head_dim 128), o_proj, then x + "
            "post_attention_layernorm(attn). rope_theta, sliding_window and rms_norm_eps 1e-6 are from the model's "
            "config.json / Olmo3Config defaults (the vendored record's excerpt ends before them).",
            hidden=4096,
            heads=32,
            kv_heads=32,
            d=128,
            inv_freq=_plain_inv_freq(128, 500000.0),
            qk_norm=True,
            post_norm=True,
            residual=1.0,
            window=4096,
            eps=1e-06,
            gpu=PREFILL_SHORT,
            cite=(
                "hidden_size",
                "num_attention_heads",
                "num_key_value_heads",
                "derived.head_dim",
                "max_position_embeddings",
            ),
        ),
        attention_block(
            GRANITE_8B,
            "granite-32-8b-instruct_attention_multipliers_h32kv8_d128",
            "attention_block",
            "Granite-3.2-8B attention sublayer with its residual (GraniteAttention and GraniteDecoderLayer.forward in "
            "transformers' modeling_granite.py): input RMSNorm (rms_norm_eps 1e-5), q/k/v projections, RoPE "
            "(rope_theta 1e7), causal GQA (num_attention_heads 32, num_key_value_heads 8, head_dim 128) with the "
            "softmax scale attention_multiplier 0.0078125 instead of head_dim^-0.5, o_proj, and the residual scaled "
            "by residual_multiplier: x + 0.22 x attn. q_proj/k_proj are drawn 4x the fan-in scale (as trained muP "
            "weights are larger), so that the small multiplier still gives a peaked softmax.",
            hidden=4096,
            heads=32,
            kv_heads=8,
            d=128,
            inv_freq=_plain_inv_freq(128, GRANITE_8B.config["rope_theta"]),
            pre_norm=True,
            residual=GRANITE_8B.config["residual_multiplier"],
            eps=1e-05,
            scale=GRANITE_8B.config["attention_multiplier"],
            qk_gain=4.0,
            cite=(
                "hidden_size",
                "num_attention_heads",
                "num_key_value_heads",
                "derived.head_dim",
                "attention_multiplier",
                "residual_multiplier",
                "rms_norm_eps",
                "rope_theta",
            ),
        ),
        moe_experts(
            QWEN3_CODER,
            "qwen3-coder-480b-a35b-instruct_moe_ep32tp4_e5of160_top8_i640",
            "fused_moe",
            "Qwen3-Coder-480B-A35B MoE layer on one rank of an expert- and tensor-parallel deployment "
            "(Qwen3MoeSparseMoeBlock in transformers' modeling_qwen3_moe.py; TensorRT-LLM's moe_ep_size x "
            "moe_tp_size mapping): EP=32 puts experts 0..4 of num_experts 160 here, TP=4 splits each expert's "
            "moe_intermediate_size 2560 to 640. The routing (top-8 = num_experts_per_tok expert ids and their "
            "renormalised softmax weights, norm_topk_prob) comes from the router problem; each local expert is "
            "a SwiGLU over its "
            "tokens (hidden_size 6144). The tokens are those dispatched to this rank (each routes to at least "
            "one local expert); the output is the rank's partial sum before the all-reduce / combine.",
            kind="softmax",
            hidden=6144,
            experts=160,
            local=5,
            inter=640,
            topk=8,
            cite=("hidden_size", "num_experts", "num_experts_per_tok", "moe_intermediate_size", "norm_topk_prob"),
        ),
        moe_experts(
            GLM47,
            "glm-47_moe_shared_ep32tp2_e5of160_top8_i768",
            "fused_moe",
            "GLM-4.7 MoE layer on one expert/tensor-parallel rank (Glm4MoeMoE.forward and Glm4MoeTopkRouter in "
            "transformers' modeling_glm4_moe.py): the router problem's top-8 of num_experts 160 (ids, and the "
            "chosen sigmoid scores renormalised and times routed_scaling_factor 2.5) weight the experts; EP=32: "
            "experts 0..4 here, TP=2 splits "
            "moe_intermediate_size 1536 to 768; plus the n_shared_experts 1 shared SwiGLU expert (also 768 "
            "per rank) on every token; hidden_size 5120. Output: the rank's partial sum before the all-reduce.",
            kind="sigmoid",
            hidden=5120,
            experts=160,
            local=5,
            inter=768,
            topk=8,
            shared_inter=768,
            scale=2.5,
            cite=(
                "hidden_size",
                "num_experts",
                "num_experts_per_tok",
                "moe_intermediate_size",
                "n_group",
                "n_shared_experts",
                "norm_topk_prob",
                "routed_scaling_factor",
            ),
        ),
        moe_experts(
            DEEPSEEK_V32,
            "deepseek-v32_moe_shared_ep64tp4_e4of256_top8_i512",
            "fused_moe",
            "DeepSeek-V3.2 MoE layer on one expert/tensor-parallel rank (DeepseekV3MoE in transformers; "
            "noaux_tc routing from the router problem: top-8 (num_experts_per_tok) of num_experts 256 within "
            "topk_group 4 of n_group 8 groups, sigmoid scores renormalised and times routed_scaling_factor "
            "2.5); EP=64: experts 0..3 here, TP=4 splits "
            "moe_intermediate_size 2048 to 512; plus the shared expert (n_shared_experts 1, 512 per rank); "
            "hidden_size 7168. Output: the rank's partial sum before the all-reduce.",
            kind="sigmoid",
            hidden=7168,
            experts=256,
            local=4,
            inter=512,
            topk=8,
            shared_inter=512,
            groups=8,
            topk_group=4,
            scale=2.5,
            cite=(
                "hidden_size",
                "num_experts",
                "num_experts_per_tok",
                "moe_intermediate_size",
                "n_group",
                "topk_group",
                "n_shared_experts",
                "routed_scaling_factor",
            ),
        ),
        moe_experts(
            LLAMA4_SCOUT,
            "llama-4-scout-17b-16e-instruct_moe_shared_ep8tp8_e2of16_top1_i1024",
            "fused_moe",
            "Llama-4-Scout MoE layer on one expert/tensor-parallel rank (Llama4TextMoe.forward in transformers' "
            "modeling_llama4.py): each token's top-1 of num_experts 16 (from the router problem) with its "
            "score sigmoid(logit), which multiplies the expert's INPUT (not its output), SwiGLU experts of "
            "intermediate_size 8192 (TP=8: "
            "1024 here; EP=8: experts 0..1), plus the shared expert (intermediate_size 8192, 1024 per rank) on "
            "every token; hidden_size 5120. Output: the rank's partial sum before the all-reduce.",
            kind="llama4",
            hidden=5120,
            experts=16,
            local=2,
            inter=1024,
            topk=1,
            shared_inter=1024,
            cite=("hidden_size", "num_experts", "num_experts_per_tok", "intermediate_size"),
        ),
        moe_experts(
            MIXTRAL_8X22B,
            "mixtral-8x22b-v01_moe_ep4tp8_e2of8_top2_i2048",
            "fused_moe",
            "Mixtral-8x22B sparse MoE block on one expert/tensor-parallel rank (MixtralSparseMoeBlock in "
            "transformers' modeling_mixtral.py): each token's top-2 (num_experts_per_tok) of num_experts 8 "
            "with renormalised softmax weights (from the router problem); SwiGLU experts of intermediate_size "
            "16384 (TP=8: 2048 here; "
            "EP=4: experts 0..1); hidden_size 6144. Output: the rank's partial sum before the all-reduce.",
            kind="softmax",
            hidden=6144,
            experts=8,
            local=2,
            inter=2048,
            topk=2,
            cite=("hidden_size", "intermediate_size", "num_experts", "num_experts_per_tok"),
        ),
    ]


def drafts() -> list[ProblemDraft]:
    return _l1_attention() + _l1_rope_and_routing() + _l2()
