"""Language models the suite did not cover: attention variants, RoPE and KV-cache writes, MoE routing and
experts, DeepSeek-V3.2's sparse MLA and indexer, and RWKV-5's recurrence, from 23 architectures of
../shared/model-configs.json (vendored as solbench/suite/data/model-configs.json).

Each problem follows its model's code in transformers 5 (``models/<x>/modeling_<x>.py``; the function is
named in the problem's description) or, where transformers has no torch path, the serving kernel it
mirrors (FlashMLA's sparse prefill/decode, FlashInfer's ``apply_llama31_rope_pos_ids``, TensorRT-LLM's MoE
permute/finalize, the RWKV-5 reference ``RUN_CUDA_RWKV5``). Values cited in ``config:`` tags are the
published ones; where a problem needs a value the record lacks (OLMo-3's sliding window and YaRN
parameters, Falcon's 4 x hidden MLP, Nemotron-Super's per-layer ``block_configs`` entries) the description
says where it comes from.

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
import math

from suite_recipes.builder import slug
from suite_recipes.l2 import body, draft
from suite_recipes.models import model
from suite_recipes.sweeps import tiered
from solbench.suite.draft import ProblemDraft

# --- models (values copied from solbench/suite/data/model-configs.json) ----------------------------------------

QWEN25_14B = model("Qwen2.5-14B", "Qwen/Qwen2.5-14B", "language",
                   {"num_attention_heads": 40, "num_key_value_heads": 8, "derived.head_dim": 128})
QWEN25_32B = model("Qwen2.5-32B", "Qwen/Qwen2.5-32B", "language",
                   {"num_attention_heads": 40, "num_key_value_heads": 8, "derived.head_dim": 128})
QWEN25_72B = model("Qwen2.5-72B", "Qwen/Qwen2.5-72B", "language",
                   {"hidden_size": 8192, "num_attention_heads": 64, "num_key_value_heads": 8,
                    "derived.head_dim": 128, "rope_theta": 1000000, "attention_bias": True})
LLAMA_32_3B = model("Llama-3.2-3B", "meta-llama/Llama-3.2-3B", "language",
                    {"num_attention_heads": 24, "num_key_value_heads": 8, "head_dim": 128})
LLAMA_31_405B = model("Llama-3.1-405B", "meta-llama/Llama-3.1-405B", "language",
                      {"hidden_size": 16384, "num_attention_heads": 128, "num_key_value_heads": 8,
                       "derived.head_dim": 128, "rope_theta": 500000.0, "rope_scaling.factor": 8.0,
                       "rope_scaling.low_freq_factor": 1.0, "rope_scaling.high_freq_factor": 4.0,
                       "rope_scaling.original_max_position_embeddings": 8192})
SMOLLM2 = model("SmolLM2-1.7B", "HuggingFaceTB/SmolLM2-1.7B", "language",
                {"num_attention_heads": 32, "num_key_value_heads": 32, "derived.head_dim": 64})
GEMMA2_27B = model("Gemma-2-27B", "google/gemma-2-27b", "language",
                   {"num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
                    "attn_logit_softcapping": 50.0, "query_pre_attn_scalar": 144, "sliding_window": 4096})
FALCON_180B = model("Falcon-180B", "tiiuae/falcon-180B", "language",
                    {"num_attention_heads": 232, "num_key_value_heads": 8, "derived.head_dim": 64})
FALCON_40B = model("Falcon-40B", "tiiuae/falcon-40b", "language",
                   {"hidden_size": 8192, "num_attention_heads": 128, "num_key_value_heads": 8,
                    "derived.head_dim": 64})
FALCON_7B = model("Falcon-7B", "tiiuae/falcon-7b", "language",
                  {"num_attention_heads": 71, "num_key_value_heads": 1, "derived.head_dim": 64})
FALCON3_7B = model("Falcon3-7B-Base", "tiiuae/Falcon3-7B-Base", "language",
                   {"num_attention_heads": 12, "num_key_value_heads": 4, "derived.head_dim": 256})
LLAMA4_SCOUT = model("Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Scout-17B-16E-Instruct", "language",
                     {"hidden_size": 5120, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
                      "attention_chunk_size": 8192, "rope_theta": 500000.0, "rope_scaling.factor": 16.0,
                      "rope_scaling.low_freq_factor": 1.0, "rope_scaling.high_freq_factor": 1.0,
                      "rope_scaling.original_max_position_embeddings": 8192, "rms_norm_eps": 1e-05,
                      "num_experts": 16, "num_experts_per_tok": 1, "intermediate_size": 8192})
COMMAND_R = model("Command-R-v01 (35B)", "CohereForAI/c4ai-command-r-v01", "language",
                  {"hidden_size": 8192, "intermediate_size": 22528, "num_attention_heads": 64,
                   "num_key_value_heads": 64, "derived.head_dim": 128, "layer_norm_eps": 1e-05,
                   "rope_theta": 8000000.0})
OLMO2_32B = model("OLMo-2-0325-32B", "allenai/OLMo-2-0325-32B", "language",
                  {"hidden_size": 5120, "num_attention_heads": 40, "num_key_value_heads": 8, "derived.head_dim": 128,
                   "rms_norm_eps": 1e-06, "rope_theta": 500000.0})
OLMO2_13B = model("OLMo-2-1124-13B", "allenai/OLMo-2-1124-13B", "language",
                  {"hidden_size": 5120, "intermediate_size": 13824, "rms_norm_eps": 1e-06})
OLMO3_7B = model("OLMo-3-7B", "allenai/Olmo-3-7B-RLZero-Code", "language",
                 {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 32, "derived.head_dim": 128,
                  "max_position_embeddings": 65536})
GRANITE_8B = model("Granite-3.2-8B-Instruct", "ibm-granite/granite-3.2-8b-instruct", "language",
                   {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "derived.head_dim": 128,
                    "attention_multiplier": 0.0078125, "residual_multiplier": 0.22, "rms_norm_eps": 1e-05,
                    "rope_theta": 10000000.0})
NEMOTRON_SUPER = model("Llama-3.3-Nemotron-Super-49B-v1", "nvidia/Llama-3_3-Nemotron-Super-49B-v1", "language",
                       {"hidden_size": 8192, "rms_norm_eps": 1e-05, "hidden_act": "silu"})
GLM47 = model("GLM-4.7", "zai-org/GLM-4.7", "language",
              {"hidden_size": 5120, "num_key_value_heads": 8, "head_dim": 128, "partial_rotary_factor": 0.5,
               "rope_theta": 1000000, "num_experts": 160, "num_experts_per_tok": 8, "n_group": 1, "topk_group": 1,
               "n_shared_experts": 1, "moe_intermediate_size": 1536, "norm_topk_prob": True,
               "routed_scaling_factor": 2.5})
QWEN3_CODER = model("Qwen3-Coder-480B-A35B-Instruct", "Qwen/Qwen3-Coder-480B-A35B-Instruct", "language",
                    {"hidden_size": 6144, "num_experts": 160, "num_experts_per_tok": 8, "moe_intermediate_size": 2560,
                     "norm_topk_prob": True})
MIXTRAL_8X22B = model("Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x22B-v0.1", "language",
                      {"hidden_size": 6144, "intermediate_size": 16384, "num_experts": 8, "num_experts_per_tok": 2})
DEEPSEEK_V32 = model("DeepSeek-V3.2", "deepseek-ai/DeepSeek-V3.2", "language",
                     {"hidden_size": 7168, "num_attention_heads": 128, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
                      "qk_rope_head_dim": 64, "v_head_dim": 128, "q_lora_rank": 1536, "rms_norm_eps": 1e-06,
                      "index_n_heads": 64, "index_head_dim": 128, "index_topk": 2048, "num_experts": 256,
                      "num_experts_per_tok": 8, "n_group": 8, "topk_group": 4, "n_shared_experts": 1,
                      "moe_intermediate_size": 2048, "routed_scaling_factor": 2.5, "norm_topk_prob": True,
                      "rope_theta": 10000, "rope_scaling.factor": 40, "rope_scaling.beta_fast": 32,
                      "rope_scaling.beta_slow": 1, "rope_scaling.mscale_all_dim": 1.0,
                      "rope_scaling.original_max_position_embeddings": 4096})
RWKV5_3B = model("RWKV-5 3B (mlc-llm preset rwkv5_3b)", None, "language",
                 {"hidden_size": 2560, "head_size": 64, "attention_hidden_size": 2560})


def _cite(m, *keys):
    """The model with only the config values this problem uses (its ``config:`` tags)."""
    return dataclasses.replace(m, config={k: m.config[k] for k in keys})


# --- sweeps (GPU tier: upstream scale, 16 workloads; CPU tier: 8 small ones) ---------------------------------------

PREFILL = ((1, 1024), (1, 2048), (2, 1024), (1, 4096), (4, 1024), (2, 4096), (1, 8192), (8, 1024), (4, 4096),
           (2, 8192), (1, 16384), (8, 4096), (4, 8192), (2, 16384), (1, 32768), (8, 8192))
"""(batch, prompt length): 1k-32k tokens per sequence, up to 64k tokens."""
PREFILL_SHORT = ((1, 1024), (2, 1024), (1, 2048), (4, 1024), (1, 3072), (2, 2048), (1, 4096), (8, 1024),
                 (4, 2048), (2, 4096), (1, 6144), (8, 2048), (4, 4096), (1, 8192), (2, 8192), (4, 8192))
"""For references that materialise the [heads, seq, seq] score matrix (soft-capping): at most 8k per sequence."""
DECODE = ((1, 1024), (8, 1024), (32, 1024), (64, 1024), (128, 1024), (1, 4096), (8, 4096), (32, 4096),
          (64, 4096), (1, 8192), (16, 8192), (32, 8192), (1, 16384), (8, 16384), (1, 32768), (8, 32768))
"""(batch, context): decode steps over 1k-32k cached tokens."""
DECODE_ONE_KV_HEAD = ((1, 1024), (8, 1024), (64, 1024), (256, 1024), (1, 4096), (16, 4096), (64, 4096),
                      (256, 4096), (1, 8192), (32, 8192), (128, 8192), (1, 16384), (16, 16384), (128, 16384),
                      (1, 32768), (64, 32768))
"""Larger batches for a rank that caches one KV head (256 bytes per token at head_dim 64)."""
TOKENS = (1, 4, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768, 65536)
TOKENS_MOE = (1, 4, 16, 64, 128, 256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 32768)
STEPS = ((1, 32), (2, 32), (1, 64), (4, 32), (2, 64), (8, 64), (1, 128), (16, 64), (4, 128), (32, 64),
         (16, 128), (64, 64), (32, 128), (128, 128), (256, 128), (512, 128))
"""Recurrences looped over time in Python: at most 128 steps per sequence (the analyser traces each step),
batches to 512 sequences (the largest moves 1.3 GB)."""

CPU_PREFILL = ((1, 16), (1, 33), (2, 64), (1, 128), (2, 100), (1, 255), (1, 384), (2, 256))
CPU_DECODE = ((1, 64), (2, 128), (4, 256), (1, 1000), (8, 64), (2, 512), (3, 333), (1, 2048))
CPU_TOKENS = (1, 3, 16, 64, 100, 128, 255, 512)
CPU_MOE_TOKENS = (4, 7, 16, 64, 100, 128, 255, 512)
"""At least 4 tokens, so the routing differs between the input sets validate draws."""
CPU_STEPS = ((1, 4), (1, 16), (2, 8), (1, 32), (4, 16), (2, 32), (1, 64), (3, 48))


def _seqs(pairs, first="batch_size", second="seq_len"):
    return [{first: a, second: b} for a, b in pairs]


def _tok(values, axis="num_tokens"):
    return [{axis: v} for v in values]


def _tiers(d: ProblemDraft, set_name: str, gpu, cpu, families, kernel: str) -> ProblemDraft:
    """The set, ``family:``/``kernel:`` tags and the two tiers (`sweeps.tiered`; a CPU workload the GPU tier also
    has moves one step along its batch axis)."""
    tags = [f"family:{f}" for f in families] + [f"kernel:{kernel}"]
    return tiered(dataclasses.replace(d, cpu_workloads=list(cpu)), gpu, shift="batch", set=set_name,
                  extra_tags=tags + list(d.extra_tags))


# --- reference helpers (appended to l2's _acc, _rmsnorm, _rotate_half, _rope_tables) ------------------------------

_HELPERS = '''

def _llama3_inv_freq(dim, theta, factor, low_freq_factor, high_freq_factor, original, device):
    # transformers' _compute_llama3_parameters (modeling_rope_utils.py), in float64
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=device, dtype=torch.float64) / dim))
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > original / low_freq_factor, inv_freq / factor, inv_freq)
    if high_freq_factor == low_freq_factor:
        return scaled
    smooth = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= original / high_freq_factor) & (wavelen <= original / low_freq_factor)
    return torch.where(medium, smoothed, scaled)


def _yarn_inv_freq(dim, theta, factor, beta_fast, beta_slow, original, device):
    # DeepSeek's yarn_find_correction_range / yarn_linear_ramp_mask (mscale / mscale_all_dim = 1 here)
    def correction(rotations):
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(theta))
    low = max(math.floor(correction(beta_fast)), 0)
    high = min(math.ceil(correction(beta_slow)), dim - 1)
    high = high + 0.001 if low == high else high
    extra = 1.0 / (theta ** (torch.arange(0, dim, 2, device=device, dtype=torch.float64) / dim))
    ramp = ((torch.arange(dim // 2, device=device, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    keep = 1 - ramp
    return extra / factor * (1 - keep) + extra * keep


def _angles(positions, inv_freq, ref):
    """cos/sin [*positions.shape, 2 * len(inv_freq)] (halves repeated), angles formed in float64."""
    freqs = positions.to(torch.float64)[..., None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(_acc(ref)), emb.sin().to(_acc(ref))


def _deinterleave(x):
    # DeepSeek's interleaved rope layout: (re, im) pairs -> halves, then rotate-half applies
    d = x.shape[-1]
    return x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).reshape(x.shape)
'''


def _body(src: str) -> str:
    return body(_HELPERS + "\n\n" + src)


def _bf(shape, std=1.0, mean=None):
    return (shape, "bfloat16", std) if mean is None else (shape, "bfloat16", std, mean)


_POSITIONS = "torch.randint(0, @MAXPOS@, (shape[0],), device=device)"


# ================================================ L1: attention cores ==============================================

_PREFILL_SDPA = '''@torch.no_grad()
def run(query, key, value):
    return F.scaled_dot_product_attention(query, key, value, is_causal=True, enable_gqa=True@SCALE@)
'''

_PREFILL_MASKED = '''@torch.no_grad()
def run(query, key, value):
    b, hq, s, d = query.shape
    group = hq // key.shape[1]
    acc = _acc(query)
    pos = torch.arange(s, device=query.device)
    allowed = @MASK@
    out = torch.empty_like(query)
    for i in range(b):  # one sequence at a time: the [heads, s, s] scores of one sequence stay in memory
        q = query[i].to(acc)
        k = key[i].repeat_interleave(group, dim=0).to(acc)
        v = value[i].repeat_interleave(group, dim=0).to(acc)
        scores = q @ k.transpose(-1, -2) * @SCALE@
@CAP@        scores = scores.masked_fill(~allowed, float("-inf"))
        out[i] = (torch.softmax(scores, dim=-1) @ v).to(query.dtype)
    return out
'''


def attention_prefill(m, name: str, kernel: str, text: str, *, heads, kv_heads, d, gpu, scale=None, softcap=None,
                      window=None, chunk=None, cite=()) -> ProblemDraft:
    """Causal (GQA) attention over a prompt: q [B, Hq, S, D], k/v [B, Hkv, S, D] -> o [B, Hq, S, D]."""
    axes = {"batch_size": (None, "sequences"), "seq_len": (None, "prompt length"),
            "num_heads": (heads, "query heads"), "num_kv_heads": (kv_heads, "key/value heads"),
            "head_dim": (d, "head_dim")}
    inputs = {"query": _bf(["batch_size", "num_heads", "seq_len", "head_dim"]),
              "key": _bf(["batch_size", "num_kv_heads", "seq_len", "head_dim"]),
              "value": _bf(["batch_size", "num_kv_heads", "seq_len", "head_dim"])}
    if softcap is None and window is None and chunk is None:
        src = _PREFILL_SDPA.replace("@SCALE@", f", scale={scale!r}" if scale else "")
    else:
        mask = "pos[None, :] <= pos[:, None]"
        if window:
            mask += f" & (pos[:, None] - pos[None, :] < {window})"
        if chunk:
            mask += f" & (pos[:, None] // {chunk} == pos[None, :] // {chunk})"
        cap = f"        scores = torch.tanh(scores / {softcap!r}) * {softcap!r}\n" if softcap else ""
        src = _PREFILL_MASKED.replace("@MASK@", mask).replace("@CAP@", cap).replace(
            "@SCALE@", repr(scale if scale else d ** -0.5))
    d_ = draft(_cite(m, *cite), name, "attention_prefill", text, axes, inputs,
               {"output": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16")}, _body(src),
               _seqs(CPU_PREFILL))
    return _tiers(d_, "L1", _seqs(gpu), _seqs(CPU_PREFILL), ["attention"], kernel)


_DECODE_SDPA = '''@torch.no_grad()
def run(query, k_cache, v_cache):
    o = F.scaled_dot_product_attention(query[:, :, None], k_cache, v_cache, enable_gqa=True@SCALE@)
    return o[:, :, 0]
'''

_DECODE_WINDOW = '''@torch.no_grad()
def run(query, k_cache, v_cache):
    b, hq, d = query.shape
    hkv = k_cache.shape[1]
    acc = _acc(query)
    k = k_cache[:, :, -@WINDOW@:].to(acc)  # the new token sees the last sliding_window positions (itself included)
    v = v_cache[:, :, -@WINDOW@:].to(acc)
    q = query.to(acc).view(b, hkv, hq // hkv, d)
    scores = q @ k.transpose(-1, -2) * @SCALE@
    scores = torch.tanh(scores / @CAP@) * @CAP@
    return (torch.softmax(scores, dim=-1) @ v).reshape(b, hq, d).to(query.dtype)
'''


def attention_decode(m, name: str, kernel: str, text: str, *, heads, kv_heads, d, scale=None, softcap=None,
                     window=None, cite=(), gpu=DECODE) -> ProblemDraft:
    """One new token per sequence attends to its whole KV cache (the new token's k/v already appended)."""
    axes = {"batch_size": (None, "sequences decoding"), "context_len": (None, "cached tokens, the new one included"),
            "num_heads": (heads, "query heads"), "num_kv_heads": (kv_heads, "key/value heads"),
            "head_dim": (d, "head_dim")}
    inputs = {"query": _bf(["batch_size", "num_heads", "head_dim"]),
              "k_cache": _bf(["batch_size", "num_kv_heads", "context_len", "head_dim"]),
              "v_cache": _bf(["batch_size", "num_kv_heads", "context_len", "head_dim"])}
    if window:
        src = _DECODE_WINDOW.replace("@WINDOW@", str(window)).replace("@SCALE@", repr(scale)).replace(
            "@CAP@", repr(softcap))
        cpu = ((1, 4096), (2, 4096), (1, 4097), (2, 5000), (1, 6000), (3, 4500), (1, 8192), (4, 4200))
        constraints = [f"context_len >= {window}"]
        gpu = [p for p in DECODE if p[1] >= window] + [(2, 4096), (4, 8192), (64, 8192), (128, 4096), (256, 4096),
                                                      (128, 8192), (16, 32768)]
    else:
        src = _DECODE_SDPA.replace("@SCALE@", f", scale={scale!r}" if scale else "")
        cpu, constraints = CPU_DECODE, []
    d_ = draft(_cite(m, *cite), name, "attention_decode", text, axes, inputs,
               {"output": (["batch_size", "num_heads", "head_dim"], "bfloat16")}, _body(src),
               _seqs(cpu, second="context_len"))
    d_ = dataclasses.replace(d_, constraints=constraints)
    return _tiers(d_, "L1", _seqs(gpu, second="context_len"), _seqs(cpu, second="context_len"), ["attention"],
                  kernel)


_ATTN_BWD = '''def run(query, key, value, grad_output):
    with torch.enable_grad():
        q, k, v = (t.detach().requires_grad_() for t in (query, key, value))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return torch.autograd.grad(o, (q, k, v), grad_output)
'''


def attention_backward(m, name: str, text: str, *, heads, kv_heads, d, gpu, cite) -> ProblemDraft:
    shape_q = ["batch_size", "num_heads", "seq_len", "head_dim"]
    shape_kv = ["batch_size", "num_kv_heads", "seq_len", "head_dim"]
    d_ = draft(_cite(m, *cite), name, "attention_backward", text,
               {"batch_size": (None, "sequences in the micro-batch"), "seq_len": (None, "sequence length"),
                "num_heads": (heads, "query heads"), "num_kv_heads": (kv_heads, "key/value heads"),
                "head_dim": (d, "head_dim")},
               {"query": _bf(shape_q), "key": _bf(shape_kv), "value": _bf(shape_kv), "grad_output": _bf(shape_q)},
               {"grad_query": (shape_q, "bfloat16"), "grad_key": (shape_kv, "bfloat16"),
                "grad_value": (shape_kv, "bfloat16")},
               _body(_ATTN_BWD), _seqs(CPU_PREFILL), backward=True)
    return _tiers(d_, "L1", _seqs(gpu), _seqs(CPU_PREFILL), ["attention"], "flash_attention_backward")


# ============================================ L1: RoPE and KV-cache writes =========================================

_LLAMA3_ROPE = '''@torch.no_grad()
def run(query, key, positions):
    inv_freq = _llama3_inv_freq(@D@, @THETA@, @FACTOR@, @LOW@, @HIGH@, @ORIG@, query.device)
    cos, sin = _angles(positions, inv_freq, query)
    cos, sin = cos[:, None], sin[:, None]
    acc = _acc(query)
    q, k = query.to(acc), key.to(acc)
    return ((q * cos + _rotate_half(q) * sin).to(query.dtype), (k * cos + _rotate_half(k) * sin).to(key.dtype))
'''


def llama3_rope(m, name, heads, kv_heads, d, text, cite):
    c = m.config
    subs = {"D": d, "THETA": float(c["rope_theta"]), "FACTOR": float(c["rope_scaling.factor"]),
            "LOW": float(c["rope_scaling.low_freq_factor"]), "HIGH": float(c["rope_scaling.high_freq_factor"]),
            "ORIG": int(c["rope_scaling.original_max_position_embeddings"])}
    d_ = draft(_cite(m, *cite), name, "rope", text,
               {"num_tokens": (None, "tokens (prefill chunk or decode batch)"), "num_heads": (heads, "query heads"),
                "num_kv_heads": (kv_heads, "key/value heads"), "head_dim": (d, "head_dim")},
               {"query": _bf(["num_tokens", "num_heads", "head_dim"]),
                "key": _bf(["num_tokens", "num_kv_heads", "head_dim"]),
                "positions": (["num_tokens"], "int64", _POSITIONS.replace("@MAXPOS@", "131072"))},
               {"query_out": (["num_tokens", "num_heads", "head_dim"], "bfloat16"),
                "key_out": (["num_tokens", "num_kv_heads", "head_dim"], "bfloat16")},
               _body(_LLAMA3_ROPE), _tok(CPU_TOKENS), subs=subs)
    return _tiers(d_, "L1", _tok(TOKENS), _tok(CPU_TOKENS), ["rope_kv"], "llama31_rope_pos_ids")


_PARTIAL_ROPE_KV = '''@torch.no_grad()
def run(key, value, positions, slot_mapping, k_cache, v_cache):
    rot = @ROT@
    inv_freq = 1.0 / (@THETA@ ** (torch.arange(0, rot, 2, device=key.device, dtype=torch.float64) / rot))
    cos, sin = _angles(positions, inv_freq, key)
    k = key.to(_acc(key))
    k_rot = k[..., :rot] * cos[:, None] + _rotate_half(k[..., :rot]) * sin[:, None]
    k = torch.cat((k_rot, k[..., rot:]), dim=-1).to(k_cache.dtype)
    # the cache write: only the written slots are returned (a kernel writes them in place)
    k_cache = k_cache.clone()
    v_cache = v_cache.clone()
    k_cache[slot_mapping] = k
    v_cache[slot_mapping] = value.to(v_cache.dtype)
    return k_cache[slot_mapping], v_cache[slot_mapping]
'''


# ============================================ L1: routers ==========================================================

_ROUTER_SOFTMAX = '''@torch.no_grad()
def run(hidden_states, gate_weight):
    logits = F.linear(hidden_states.to(torch.float32 if hidden_states.dtype != torch.float64 else torch.float64),
                      gate_weight.to(torch.float32 if gate_weight.dtype != torch.float64 else torch.float64))
    @SELECT@
    weights = torch.zeros_like(logits)
    return weights.scatter(1, topk_index, topk_weight), logits
'''
_SOFTMAX_TOPK = '''probs = torch.softmax(logits, dim=-1)
    topk_weight, topk_index = torch.topk(probs, @TOPK@, dim=-1)
    topk_weight = topk_weight / topk_weight.sum(dim=-1, keepdim=True)'''
_LLAMA4_TOP1 = '''topk_logit, topk_index = torch.topk(logits, @TOPK@, dim=-1)
    topk_weight = torch.sigmoid(topk_logit)'''

_ROUTER_SIGMOID = '''@torch.no_grad()
def run(hidden_states, gate_weight, e_score_correction_bias):
    acc = torch.float64 if hidden_states.dtype == torch.float64 else torch.float32
    logits = F.linear(hidden_states.to(acc), gate_weight.to(acc))
    scores = logits.sigmoid()
    choice = scores + e_score_correction_bias.to(acc)
    t, e = choice.shape
    groups = @GROUPS@
    if groups > 1:
        group_scores = choice.view(t, groups, e // groups).topk(2, dim=-1)[0].sum(dim=-1)
        group_index = torch.topk(group_scores, @TOPK_GROUP@, dim=-1)[1]
        group_mask = torch.zeros_like(group_scores).scatter(1, group_index, 1.0)
        keep = group_mask[:, :, None].expand(t, groups, e // groups).reshape(t, e)
        choice = choice.masked_fill(keep == 0, float("-inf"))
    topk_index = torch.topk(choice, @TOPK@, dim=-1)[1]
    topk_weight = scores.gather(1, topk_index)
    topk_weight = topk_weight / (topk_weight.sum(dim=-1, keepdim=True) + 1e-20) * @SCALE@
    return torch.zeros_like(scores).scatter(1, topk_index, topk_weight), logits
'''


def router(m, name, kernel, text, *, kind, experts, topk, hidden, cite, groups=1, topk_group=1, scale=1.0,
           weight_dtype="bfloat16") -> ProblemDraft:
    inputs = {"hidden_states": _bf(["num_tokens", "hidden_size"]),
              "gate_weight": (["num_experts", "hidden_size"], weight_dtype, hidden ** -0.5)}
    if kind == "sigmoid":
        inputs["e_score_correction_bias"] = (["num_experts"], "float32", 0.05)
        src = _ROUTER_SIGMOID
    else:
        src = _ROUTER_SOFTMAX.replace("@SELECT@", _SOFTMAX_TOPK if kind == "softmax" else _LLAMA4_TOP1)
    d_ = draft(_cite(m, *cite), name, "moe_router", text,
               {"num_tokens": (None, "tokens"), "hidden_size": (hidden, "hidden_size"),
                "num_experts": (experts, "num_experts")},
               inputs, {"routing_weights": (["num_tokens", "num_experts"], "float32"),
                        "router_logits": (["num_tokens", "num_experts"], "float32")},
               _body(src), _tok(CPU_TOKENS),
               subs={"TOPK": topk, "GROUPS": groups, "TOPK_GROUP": topk_group, "SCALE": float(scale)})
    return _tiers(d_, "L1", _tok(TOKENS), _tok(CPU_TOKENS), ["moe"], kernel)


# ============================================ L2: MoE experts ======================================================

_LOCAL_FIRST_IDS = ("(lambda first: torch.cat([(first + j * (a['num_experts'] // shape[1])) % a['num_experts'] "
                    "for j in range(shape[1])], dim=1))(torch.randint(0, a['local_experts'], (shape[0], 1), "
                    "device=device))")
"""Expert ids of tokens dispatched to this rank: slot 0 is a local expert (0..local_experts-1), the other slots
are spread over all experts at stride num_experts // top_k, so a token's ids are distinct. Integer arithmetic
only, so the analyser can follow the routing at GPU scale."""

_MOE = '''@torch.no_grad()
def run(@ARGS@):
    acc = _acc(hidden_states)
    out = torch.zeros(hidden_states.shape, device=hidden_states.device, dtype=acc)
    for j in range(w_gate.shape[0]):  # this rank's experts: global ids 0..local_experts-1
        token, slot = torch.where(topk_ids == j)
        x = hidden_states[token]
@EXPERT@
@SHARED@    return out.to(hidden_states.dtype)
'''
_EXPERT_OUT = '''        h = F.silu(F.linear(x, w_gate[j])) * F.linear(x, w_up[j])
        out.index_add_(0, token, F.linear(h, w_down[j]).to(acc) * topk_weights[token, slot, None].to(acc))'''
_EXPERT_IN = '''        x = (x.to(acc) * topk_weights[token, slot, None].to(acc)).to(x.dtype)  # Llama-4 scales the expert's input
        h = F.silu(F.linear(x, w_gate[j])) * F.linear(x, w_up[j])
        out.index_add_(0, token, F.linear(h, w_down[j]).to(acc))'''


def moe_experts(m, name, kernel, text, *, kind, hidden, experts, local, inter, topk, cite, shared_inter=0,
                groups=1, topk_group=1, scale=1.0) -> ProblemDraft:
    args = ["hidden_states", "topk_ids", "topk_weights", "w_gate", "w_up", "w_down"]
    weights = {"softmax": "torch.rand(shape, device=device) * 0.5 + 0.1",
               "sigmoid": f"torch.rand(shape, device=device) * {0.5 * scale!r} + {0.05 * scale!r}",
               "llama4": "torch.sigmoid(torch.randn(shape, device=device) + 1.0)"}[kind]
    inputs = {"hidden_states": _bf(["num_tokens", "hidden_size"]),
              "topk_ids": (["num_tokens", "top_k"], "int32", _LOCAL_FIRST_IDS),
              "topk_weights": (["num_tokens", "top_k"], "float32", weights)}
    inputs.update({"w_gate": _bf(["local_experts", "intermediate_shard", "hidden_size"], hidden ** -0.5),
                   "w_up": _bf(["local_experts", "intermediate_shard", "hidden_size"], hidden ** -0.5),
                   "w_down": _bf(["local_experts", "hidden_size", "intermediate_shard"], inter ** -0.5)})
    axes = {"num_tokens": (None, "tokens dispatched to this rank"), "hidden_size": (hidden, "hidden_size"),
            "num_experts": (experts, "num_experts"), "local_experts": (local, "experts on this expert-parallel rank"),
            "top_k": (topk, "num_experts_per_tok"),
            "intermediate_shard": (inter, "expert intermediate size on this tensor-parallel rank")}
    shared = ""
    if shared_inter:
        args += ["shared_gate", "shared_up", "shared_down"]
        axes["shared_shard"] = (shared_inter, "shared expert intermediate size on this rank")
        inputs.update({"shared_gate": _bf(["shared_shard", "hidden_size"], hidden ** -0.5),
                       "shared_up": _bf(["shared_shard", "hidden_size"], hidden ** -0.5),
                       "shared_down": _bf(["hidden_size", "shared_shard"], shared_inter ** -0.5)})
        shared = ("    s = F.linear(F.silu(F.linear(hidden_states, shared_gate)) * F.linear(hidden_states, shared_up),"
                  " shared_down)\n    out = out + s.to(acc)\n")
    src = _MOE.replace("@ARGS@", ", ".join(args)).replace(
        "@EXPERT@", _EXPERT_IN if kind == "llama4" else _EXPERT_OUT).replace("@SHARED@", shared)
    text += (" Routing arrives as the fused-experts kernel's inputs (vLLM fused_experts, TensorRT-LLM's MoE "
             "plugin): topk_ids [tokens, top_k] and fp32 topk_weights; the tokens are those dispatched to this rank "
             "(slot 0 names a local expert), so the selection itself cannot tie here.")
    d_ = draft(_cite(m, *cite), name, "moe", text, axes, inputs,
               {"output": (["num_tokens", "hidden_size"], "bfloat16")}, _body(src), _tok(CPU_MOE_TOKENS))
    return _tiers(d_, "L2", _tok(TOKENS_MOE), _tok(CPU_MOE_TOKENS), ["moe"], kernel)


# ============================================ L2: attention blocks =================================================

_BLOCK = '''@torch.no_grad()
def run(@ARGS@):
    b, s, _ = hidden_states.shape
    acc = _acc(hidden_states)
    x = @PRENORM@
    q = F.linear(x, q_proj@QB@)
    k = F.linear(x, k_proj@KB@)
    v = F.linear(x, v_proj@VB@)
@QKNORM@    q = q.view(b, s, -1, @D@).transpose(1, 2)
    k = k.view(b, s, -1, @D@).transpose(1, 2)
    v = v.view(b, s, -1, @D@).transpose(1, 2)
    cos, sin = _angles(torch.arange(s, device=x.device), @INV_FREQ@, x)
    q = (q.to(acc) * cos + _rotate_half(q.to(acc)) * sin).to(q.dtype)
    k = (k.to(acc) * cos + _rotate_half(k.to(acc)) * sin).to(k.dtype)
@ATTN@
    out = F.linear(o.transpose(1, 2).reshape(b, s, -1), o_proj)
@POST@    return out
'''
_CAUSAL = "    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True@SCALE@)"
_WINDOWED = '''    pos = torch.arange(s, device=x.device)
    mask = (pos[None, :] <= pos[:, None]) & (pos[:, None] - pos[None, :] < @WINDOW@)
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True@SCALE@)'''


def attention_block(m, name, kernel, text, *, hidden, heads, kv_heads, d, inv_freq, cite, bias=False, qk_norm=False,
                    pre_norm=False, post_norm=False, residual=None, window=None, scale=None, eps=1e-6,
                    gpu=PREFILL, extra_families=(), qk_gain=1.0) -> ProblemDraft:
    """Self-attention sublayer over a prompt: projections, RoPE, causal GQA, o_proj (+ the model's norms/residual)."""
    args = ["hidden_states", "q_proj", "k_proj", "v_proj", "o_proj"]
    inputs = {"hidden_states": _bf(["batch_size", "seq_len", "hidden_size"]),
              "q_proj": _bf(["q_dim", "hidden_size"], qk_gain * hidden ** -0.5),
              "k_proj": _bf(["kv_dim", "hidden_size"], qk_gain * hidden ** -0.5),
              "v_proj": _bf(["kv_dim", "hidden_size"], hidden ** -0.5),
              "o_proj": _bf(["hidden_size", "q_dim"], (heads * d) ** -0.5)}
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
    src = _BLOCK.replace("@ARGS@", ", ".join(args))
    for key, arg in (("QB", "q_bias"), ("KB", "k_bias"), ("VB", "v_bias")):
        src = src.replace(f"@{key}@", f", {arg}" if bias else "")
    src = src.replace("@PRENORM@", f"_rmsnorm(hidden_states, input_norm, {eps!r})" if pre_norm else "hidden_states")
    src = src.replace("@QKNORM@", f"    q = _rmsnorm(q, q_norm, {eps!r})\n    k = _rmsnorm(k, k_norm, {eps!r})\n"
                      if qk_norm else "")
    attn = _WINDOWED.replace("@WINDOW@", str(window)) if window else _CAUSAL
    src = src.replace("@ATTN@", attn.replace("@SCALE@", f", scale={scale!r}" if scale else ""))
    post = ""
    if post_norm:
        post += f"    out = _rmsnorm(out, post_norm, {eps!r})\n"
    if residual is not None:
        post += f"    out = (hidden_states.to(acc) + out.to(acc) * {float(residual)!r}).to(hidden_states.dtype)\n"
    src = src.replace("@POST@", post).replace("@INV_FREQ@", inv_freq).replace("@D@", str(d))
    d_ = draft(_cite(m, *cite), name, "attention_block", text,
               {"batch_size": (None, "sequences"), "seq_len": (None, "prompt length"),
                "hidden_size": (hidden, "hidden_size"), "q_dim": (heads * d, f"{heads} query heads x head_dim {d}"),
                "kv_dim": (kv_heads * d, f"{kv_heads} key/value heads x head_dim {d}")},
               inputs, {"output": (["batch_size", "seq_len", "hidden_size"], "bfloat16")}, _body(src),
               _seqs(CPU_PREFILL))
    return _tiers(d_, "L2", _seqs(gpu), _seqs(CPU_PREFILL), ["attention", *extra_families], kernel)


def _plain_inv_freq(d, theta):
    return f"1.0 / ({float(theta)!r} ** (torch.arange(0, {d}, 2, device=x.device, dtype=torch.float64) / {d}))"


_PARALLEL = '''@torch.no_grad()
def run(@ARGS@):
    b, s, _ = hidden_states.shape
    acc = _acc(hidden_states)
    x_attn = @LN_ATTN@
    x_mlp = @LN_MLP@
    q = F.linear(x_attn, q_proj).view(b, s, -1, @D@).transpose(1, 2)
    k = F.linear(x_attn, k_proj).view(b, s, -1, @D@).transpose(1, 2)
    v = F.linear(x_attn, v_proj).view(b, s, -1, @D@).transpose(1, 2)
    cos, sin = _angles(torch.arange(s, device=q.device), @INV_FREQ@, q)
@ROPE@
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    attn = F.linear(o.transpose(1, 2).reshape(b, s, -1), o_proj)
@MLP@
    return (attn.to(acc) + mlp.to(acc)).to(hidden_states.dtype)
'''
_ROPE_HALF = '''    q = (q.to(acc) * cos + _rotate_half(q.to(acc)) * sin).to(q.dtype)
    k = (k.to(acc) * cos + _rotate_half(k.to(acc)) * sin).to(k.dtype)'''
_ROPE_COHERE = '''    # Cohere: frequencies repeat_interleave'd and (x[2i], x[2i+1]) pairs rotated (its rotate_half)
    half = cos.shape[-1] // 2
    cos = cos[..., :half].repeat_interleave(2, dim=-1)
    sin = sin[..., :half].repeat_interleave(2, dim=-1)

    def rot(t):
        return torch.stack((-t[..., 1::2], t[..., ::2]), dim=-1).flatten(-2)
    q = (q.to(acc) * cos + rot(q.to(acc)) * sin).to(q.dtype)
    k = (k.to(acc) * cos + rot(k.to(acc)) * sin).to(k.dtype)'''


def parallel_block(m, name, kernel, text, *, hidden, heads, kv_heads, d, inter, theta, cite, style) -> ProblemDraft:
    """Falcon / Command-R: attention and MLP read the same input and their outputs are summed (one rank's part)."""
    args = ["hidden_states"]
    inputs = {"hidden_states": _bf(["batch_size", "seq_len", "hidden_size"])}
    if style == "falcon":
        args += ["ln_attn_weight", "ln_attn_bias", "ln_mlp_weight", "ln_mlp_bias"]
        inputs.update({"ln_attn_weight": _bf(["hidden_size"], 0.1, 1.0), "ln_attn_bias": _bf(["hidden_size"], 0.1),
                       "ln_mlp_weight": _bf(["hidden_size"], 0.1, 1.0), "ln_mlp_bias": _bf(["hidden_size"], 0.1)})
        ln_attn = "F.layer_norm(hidden_states, (hidden_states.shape[-1],), ln_attn_weight, ln_attn_bias, 1e-05)"
        ln_mlp = "F.layer_norm(hidden_states, (hidden_states.shape[-1],), ln_mlp_weight, ln_mlp_bias, 1e-05)"
        mlp = ("    mlp = F.linear(F.gelu(F.linear(x_mlp, dense_h_to_4h)), dense_4h_to_h)")
        mlp_args = ["dense_h_to_4h", "dense_4h_to_h"]
        inputs.update({"dense_h_to_4h": _bf(["mlp_shard", "hidden_size"], hidden ** -0.5),
                       "dense_4h_to_h": _bf(["hidden_size", "mlp_shard"], inter ** -0.5)})
        rope = _ROPE_HALF
    else:
        args += ["ln_weight"]
        inputs["ln_weight"] = _bf(["hidden_size"], 0.1, 1.0)
        ln_attn = ("(lambda t: ((t - t.mean(-1, keepdim=True)) * torch.rsqrt(t.var(-1, unbiased=False, keepdim=True)"
                   " + 1e-05) * ln_weight.to(acc)).to(hidden_states.dtype))(hidden_states.to(acc))")
        ln_mlp = "x_attn"
        mlp = "    mlp = F.linear(F.silu(F.linear(x_mlp, gate_proj)) * F.linear(x_mlp, up_proj), down_proj)"
        mlp_args = ["gate_proj", "up_proj", "down_proj"]
        inputs.update({"gate_proj": _bf(["mlp_shard", "hidden_size"], hidden ** -0.5),
                       "up_proj": _bf(["mlp_shard", "hidden_size"], hidden ** -0.5),
                       "down_proj": _bf(["hidden_size", "mlp_shard"], inter ** -0.5)})
        rope = _ROPE_COHERE
    args += ["q_proj", "k_proj", "v_proj", "o_proj"] + mlp_args
    inputs.update({"q_proj": _bf(["q_dim", "hidden_size"], hidden ** -0.5),
                   "k_proj": _bf(["kv_dim", "hidden_size"], hidden ** -0.5),
                   "v_proj": _bf(["kv_dim", "hidden_size"], hidden ** -0.5),
                   "o_proj": _bf(["hidden_size", "q_dim"], (heads * d) ** -0.5)})
    inputs = {k: inputs[k] for k in args}
    src = _PARALLEL.replace("@ARGS@", ", ".join(args)).replace("@LN_ATTN@", ln_attn).replace(
        "@LN_MLP@", ln_mlp).replace("@MLP@", mlp).replace("@ROPE@", rope).replace("@D@", str(d)).replace(
        "@INV_FREQ@", _plain_inv_freq(d, theta).replace("x.device", "q.device"))
    d_ = draft(_cite(m, *cite), name, "parallel_attention_mlp_block", text,
               {"batch_size": (None, "sequences"), "seq_len": (None, "prompt length"),
                "hidden_size": (hidden, "hidden_size"), "q_dim": (heads * d, f"{heads} query heads x {d} on this rank"),
                "kv_dim": (kv_heads * d, f"{kv_heads} key/value heads x {d} on this rank"),
                "mlp_shard": (inter, "MLP intermediate size on this rank")},
               inputs, {"output": (["batch_size", "seq_len", "hidden_size"], "bfloat16")}, _body(src),
               _seqs(CPU_PREFILL))
    return _tiers(d_, "L2", _seqs(PREFILL), _seqs(CPU_PREFILL), ["attention"], kernel)


# ============================================ model-specific problems ==============================================

_MSCALE = 0.1 * DEEPSEEK_V32.config["rope_scaling.mscale_all_dim"] * math.log(DEEPSEEK_V32.config["rope_scaling.factor"]) + 1
_MLA_SCALE = (DEEPSEEK_V32.config["qk_nope_head_dim"] + DEEPSEEK_V32.config["qk_rope_head_dim"]) ** -0.5 * _MSCALE ** 2
"""DeepSeek-V3.2's softmax scale: (qk_nope_head_dim + qk_rope_head_dim) ** -0.5 times yarn's mscale squared
(mscale = 0.1 * mscale_all_dim * ln(factor) + 1), as DeepseekV32Attention sets ``self.scaling``."""


def _yarn_call(device: str) -> str:
    c = DEEPSEEK_V32.config
    return (f"_yarn_inv_freq({c['qk_rope_head_dim']}, {float(c['rope_theta'])!r}, {float(c['rope_scaling.factor'])!r}, "
            f"{float(c['rope_scaling.beta_fast'])!r}, {float(c['rope_scaling.beta_slow'])!r}, "
            f"{c['rope_scaling.original_max_position_embeddings']}, {device})")


_SPARSE_MLA = '''@torch.no_grad()
def run(query, kv, indices):
    acc = _acc(query)
    t, heads, _ = query.shape
    out = torch.empty(t, heads, @DV@, device=query.device, dtype=query.dtype)
    lse = torch.empty(t, heads, device=query.device, dtype=acc)
    for i in range(0, t, 512):  # blocks of query tokens: the gathered keys of 512 tokens stay in memory
        selected = kv[indices[i:i + 512]].to(acc)  # [n, topk, kv_lora_rank + qk_rope_head_dim]
        scores = query[i:i + 512].to(acc) @ selected.transpose(1, 2) * @SCALE@
        lse[i:i + 512] = torch.logsumexp(scores, dim=-1)
        out[i:i + 512] = (torch.softmax(scores, dim=-1) @ selected[..., :@DV@]).to(query.dtype)
    return out, lse
'''
_SPARSE_INDICES = ("(torch.randperm(a['num_kv'], device=device)[:shape[1]][None, :] + torch.randint(0, a['num_kv'], "
                   "(shape[0], 1), device=device)) % a['num_kv']")
"""Distinct cache rows per token: one random subset of the pool, shifted by a random offset per token."""


def sparse_mla(m) -> ProblemDraft:
    c = m.config
    rank, rope, topk, heads = c["kv_lora_rank"], c["qk_rope_head_dim"], c["index_topk"], c["num_attention_heads"]
    text = (f"{m.name} sparse MLA attention (DeepSeek Sparse Attention, FlashMLA's flash_mla_sparse_fwd; transformers "
            f"DeepseekV32Attention with the indexer's top-k mask, in the weight-absorbed form): each query token "
            f"attends to the index_topk {topk} cache entries its indexer selected. Queries are already absorbed into "
            f"the latent space: [tokens, num_attention_heads {heads}, kv_lora_rank {rank} + qk_rope_head_dim {rope}]; "
            f"the KV pool holds one latent row per token (normalised c_kv and rotated k_pe, MQA-style); the values "
            f"are the first kv_lora_rank columns. Softmax scale (qk_nope_head_dim + qk_rope_head_dim)^-0.5 x yarn "
            f"mscale^2 = {_MLA_SCALE:.6f}. Returns the latent output and the log-sum-exp per head (for the "
            f"prefill/decode merge). Indices are distinct per token.")
    gpu = [(1, 8192), (8, 8192), (32, 16384), (64, 32768), (128, 32768), (256, 65536), (512, 131072),
           (1024, 65536), (2048, 4096), (2048, 32768), (4096, 4096), (4096, 65536), (8192, 8192),
           (8192, 131072), (12288, 12288), (16384, 16384)]
    cpu = ((1, 4096), (2, 4096), (4, 5000), (8, 4096), (3, 8192), (5, 4100), (1, 6000), (6, 4500))
    d_ = draft(_cite(m, "num_attention_heads", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "index_topk",
                     "rope_scaling.factor", "rope_scaling.mscale_all_dim"),
               f"{slug(m)}_sparse_mla_h{heads}_d{rank + rope}_top{topk}", "mla_sparse_attention", text,
               {"num_tokens": (None, "query tokens (decode batch or prefill chunk)"),
                "num_kv": (None, "latent KV rows in the pool"), "num_heads": (heads, "num_attention_heads"),
                "qk_dim": (rank + rope, "kv_lora_rank + qk_rope_head_dim"), "v_dim": (rank, "kv_lora_rank"),
                "topk": (topk, "index_topk")},
               {"query": _bf(["num_tokens", "num_heads", "qk_dim"]), "kv": _bf(["num_kv", "qk_dim"]),
                "indices": (["num_tokens", "topk"], "int32", _SPARSE_INDICES)},
               {"output": (["num_tokens", "num_heads", "v_dim"], "bfloat16"),
                "lse": (["num_tokens", "num_heads"], "float32")},
               _body(_SPARSE_MLA), [], subs={"SCALE": _MLA_SCALE, "DV": rank})
    d_ = dataclasses.replace(d_, constraints=["num_kv > topk"])
    return _tiers(d_, "L1", _seqs(gpu, "num_tokens", "num_kv"), _seqs(cpu, "num_tokens", "num_kv"),
                  ["mla", "attention"], "flash_mla_sparse")


_INDEXER = '''@torch.no_grad()
def run(index_query, index_k_cache, head_weights):
    acc = torch.float64 if index_query.dtype == torch.float64 else torch.float32
    # DeepseekV32Indexer.forward: relu(q k^T * index_head_dim^-0.5), weighted by head and summed over heads
    scores = torch.relu(index_query.to(acc) @ index_k_cache.to(acc).transpose(1, 2) * @SCALE@)  # [b, heads, t]
    index_scores = (head_weights.to(acc)[:, None, :] @ scores)[:, 0]
    top = torch.topk(index_scores, @TOPK@, dim=-1)[1]
    return index_scores, torch.zeros_like(index_scores).scatter(1, top, 1.0)
'''


def lightning_indexer(m) -> ProblemDraft:
    c = m.config
    heads, d, topk = c["index_n_heads"], c["index_head_dim"], c["index_topk"]
    text = (f"{m.name} lightning indexer for a decode step (DeepseekV32Indexer.forward in transformers' "
            f"modeling_deepseek_v32.py, bf16 path: the Hadamard rotation and FP8 scoring of the reference kernel are "
            f"precision optimisations): index_score[t] = sum_h w[h] relu(q_h . k_t * index_head_dim^-0.5) over "
            f"index_n_heads {heads} heads of index_head_dim {d}, then the index_topk {topk} highest cache positions "
            "are selected. Returns the scores and the selection as a 0/1 float mask over the context (a near-tie flip "
            "moves two entries of one row). head_weights = weights_proj(x) * index_n_heads^-0.5, in fp32.")
    gpu = ((1, 4096), (8, 4096), (32, 4096), (64, 4096), (128, 4096), (1, 8192), (16, 8192), (32, 8192),
           (64, 8192), (128, 8192), (1, 16384), (8, 16384), (128, 16384), (1, 32768), (8, 32768), (16, 32768))
    cpu = ((1, 4096), (2, 4096), (1, 3000), (4, 6000), (2, 8192), (1, 8192), (3, 5000), (8, 4096))
    d_ = draft(_cite(m, "index_n_heads", "index_head_dim", "index_topk"),
               f"{slug(m)}_lightning_indexer_topk_h{heads}_d{d}_top{topk}", "sparse_attention_indexer", text,
               {"batch_size": (None, "sequences decoding"), "context_len": (None, "cached tokens"),
                "index_heads": (heads, "index_n_heads"), "index_dim": (d, "index_head_dim")},
               {"index_query": _bf(["batch_size", "index_heads", "index_dim"]),
                "index_k_cache": _bf(["batch_size", "context_len", "index_dim"]),
                "head_weights": (["batch_size", "index_heads"], "float32", heads ** -0.5)},
               {"index_scores": (["batch_size", "context_len"], "float32"),
                "topk_mask": (["batch_size", "context_len"], "float32")},
               _body(_INDEXER), [], subs={"SCALE": d ** -0.5, "TOPK": topk})
    d_ = dataclasses.replace(d_, constraints=[f"context_len > {topk}"])
    return _tiers(d_, "L1", _seqs(gpu, second="context_len"), _seqs(cpu, second="context_len"), ["mla", "attention"],
                  "lightning_indexer")


_MLA_CACHE_WRITE = '''@torch.no_grad()
def run(kv_a_out, kv_a_norm, positions):
    c_kv, k_pe = kv_a_out.split([@RANK@, @ROPE@], dim=-1)
    c_kv = _rmsnorm(c_kv, kv_a_norm, @EPS@)
    cos, sin = _angles(positions, @YARN@, kv_a_out)
    k = _deinterleave(k_pe).to(cos.dtype)
    k_pe = (k * cos + _rotate_half(k) * sin).to(kv_a_out.dtype)
    return torch.cat((c_kv, k_pe), dim=-1)
'''


def mla_cache_write(m) -> ProblemDraft:
    c = m.config
    rank, rope = c["kv_lora_rank"], c["qk_rope_head_dim"]
    text = (f"{m.name} MLA latent KV-cache write (DeepseekV32Attention.forward's key path in transformers: "
            f"kv_a_layernorm on the compressed kv, apply_rotary_pos_emb_interleave on k_pe; vLLM/SGLang fuse it with "
            f"the cache store): kv_a_proj's output [tokens, kv_lora_rank {rank} + qk_rope_head_dim {rope}] is split, "
            f"c_kv RMS-normalised (rms_norm_eps {c['rms_norm_eps']}) and k_pe rotated in DeepSeek's interleaved layout "
            f"with the yarn frequencies (rope_theta {c['rope_theta']}, factor {c['rope_scaling.factor']}, beta_fast "
            f"{c['rope_scaling.beta_fast']}, beta_slow {c['rope_scaling.beta_slow']}, original_max_position_embeddings "
            f"{c['rope_scaling.original_max_position_embeddings']}) at each token's position. The output is the rows "
            "written into the latent cache (one per token, cache layout); a kernel writes them in place at its slots.")
    d_ = draft(_cite(m, "kv_lora_rank", "qk_rope_head_dim", "rms_norm_eps", "rope_theta", "rope_scaling.factor",
                     "rope_scaling.beta_fast", "rope_scaling.beta_slow",
                     "rope_scaling.original_max_position_embeddings"),
               f"{slug(m)}_mla_latent_cache_write_r{rank}_d{rope}", "mla_kv_cache_write", text,
               {"num_tokens": (None, "new tokens"), "kv_a_dim": (rank + rope, "kv_lora_rank + qk_rope_head_dim"),
                "kv_lora_rank": (rank, "kv_lora_rank")},
               {"kv_a_out": _bf(["num_tokens", "kv_a_dim"]), "kv_a_norm": _bf(["kv_lora_rank"], 0.1, 1.0),
                "positions": (["num_tokens"], "int64", _POSITIONS.replace("@MAXPOS@", "163840"))},
               {"cache_rows": (["num_tokens", "kv_a_dim"], "bfloat16")},
               _body(_MLA_CACHE_WRITE.replace("@YARN@", _yarn_call("kv_a_out.device"))), [],
               subs={"RANK": rank, "ROPE": rope, "EPS": c["rms_norm_eps"]})
    long = tuple(t for t in TOKENS if t not in (12288, 24576)) + (131072, 262144)  # rows of 2.3 kB: long prefills
    return _tiers(d_, "L1", _tok(long), _tok(CPU_TOKENS), ["mla", "rope_kv"], "mla_rope_cache_write")


_MLA_DECODE = '''@torch.no_grad()
def run(hidden_states, q_a_proj, q_a_norm, q_b_proj, w_uk, w_uv, o_proj, ckv_cache, kpe_cache):
    b = hidden_states.shape[0]
    acc = _acc(hidden_states)
    heads, nope, rope = @HEADS@, @NOPE@, @ROPE@
    q = F.linear(_rmsnorm(F.linear(hidden_states, q_a_proj), q_a_norm, @EPS@), q_b_proj).view(b, heads, nope + rope)
    q_nope, q_pe = q.split([nope, rope], dim=-1)
    q_latent = torch.einsum("bhn,hnr->bhr", q_nope.to(acc), w_uk.to(acc))  # absorb kv_b_proj's key part
    positions = torch.full((b,), ckv_cache.shape[1] - 1, device=q.device)
    cos, sin = _angles(positions, @YARN@, hidden_states)
    q_pe = _deinterleave(q_pe).to(acc)
    q_pe = q_pe * cos[:, None] + _rotate_half(q_pe) * sin[:, None]
    scores = (torch.einsum("bhr,btr->bht", q_latent, ckv_cache.to(acc))
              + torch.einsum("bhp,btp->bht", q_pe, kpe_cache.to(acc))) * @SCALE@
    o_latent = torch.einsum("bht,btr->bhr", torch.softmax(scores, dim=-1), ckv_cache.to(acc))
    o = torch.einsum("bhr,hvr->bhv", o_latent, w_uv.to(acc)).to(hidden_states.dtype)  # absorb the value part
    return F.linear(o.reshape(b, -1), o_proj)
'''


def mla_absorbed_decode(m, tp: int) -> ProblemDraft:
    c = m.config
    h, heads, rank, nope, rope, vdim, q_rank = (c["hidden_size"], c["num_attention_heads"], c["kv_lora_rank"],
                                                c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"],
                                                c["q_lora_rank"])
    local = heads // tp
    text = (f"{m.name} MLA decode step, weight-absorbed (DeepseekV32Attention in transformers, in the absorbed form "
            f"serving engines run for decode): q = q_b_proj(RMSNorm(q_a_proj(x))) (q_lora_rank {q_rank}), q_nope "
            f"absorbed into the latent space with kv_b_proj's key part (w_uk), q_pe rotated (interleaved layout, yarn "
            f"frequencies, position = context_len - 1); attention over the latent cache (c_kv: kv_lora_rank {rank}, "
            f"k_pe: qk_rope_head_dim {rope}; every cached token attends: a context within index_topk needs no "
            f"selection), softmax scale {_MLA_SCALE:.6f}; the latent output mapped through kv_b_proj's value part "
            f"(w_uv, v_head_dim {vdim}) and o_proj. Tensor-parallel shard TP={tp}: {local} of num_attention_heads "
            f"{heads} heads (q_a_proj replicated); the output is this rank's partial sum before the all-reduce.")
    gpu = [(64, 8192) if p == (1, 1024) else p for p in DECODE]
    cpu = ((1, 64), (2, 128), (4, 256), (1, 1000), (8, 64), (2, 512), (3, 333), (1, 2048))
    d_ = draft(_cite(m, "hidden_size", "num_attention_heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                     "qk_rope_head_dim", "v_head_dim", "rms_norm_eps", "index_topk"),
               f"{slug(m)}_mla_absorbed_decode_tp{tp}_h{local}_r{rank}", "mla_decode", text,
               {"batch_size": (None, "sequences decoding"), "context_len": (None, "cached tokens, the new one included"),
                "hidden_size": (h, "hidden_size"), "q_lora_rank": (q_rank, "q_lora_rank"),
                "q_dim": (local * (nope + rope), "heads x (qk_nope_head_dim + qk_rope_head_dim)"),
                "num_heads": (local, f"num_attention_heads / TP={tp}"), "nope_dim": (nope, "qk_nope_head_dim"),
                "kv_lora_rank": (rank, "kv_lora_rank"), "rope_dim": (rope, "qk_rope_head_dim"),
                "v_head_dim": (vdim, "v_head_dim"), "o_dim": (local * vdim, "heads x v_head_dim")},
               {"hidden_states": _bf(["batch_size", "hidden_size"]),
                "q_a_proj": _bf(["q_lora_rank", "hidden_size"], h ** -0.5),
                "q_a_norm": _bf(["q_lora_rank"], 0.1, 1.0),
                "q_b_proj": _bf(["q_dim", "q_lora_rank"], q_rank ** -0.5),
                "w_uk": _bf(["num_heads", "nope_dim", "kv_lora_rank"], rank ** -0.5),
                "w_uv": _bf(["num_heads", "v_head_dim", "kv_lora_rank"], rank ** -0.5),
                "o_proj": _bf(["hidden_size", "o_dim"], (local * vdim) ** -0.5),
                "ckv_cache": _bf(["batch_size", "context_len", "kv_lora_rank"]),
                "kpe_cache": _bf(["batch_size", "context_len", "rope_dim"])},
               {"output": (["batch_size", "hidden_size"], "bfloat16")},
               _body(_MLA_DECODE.replace("@YARN@", _yarn_call("hidden_states.device"))), [],
               subs={"HEADS": local, "NOPE": nope, "ROPE": rope, "EPS": c["rms_norm_eps"], "SCALE": _MLA_SCALE})
    return _tiers(d_, "L2", _seqs(gpu, second="context_len"), _seqs(cpu, second="context_len"),
                  ["mla", "attention"], "mla_absorbed_decode")


_INDEXER_PROJ = '''@torch.no_grad()
def run(hidden_states, q_resid, wq_b, wk, k_norm_weight, k_norm_bias, weights_proj, positions):
    t = hidden_states.shape[0]
    acc = _acc(hidden_states)
    rope = @ROPE@
    q = F.linear(q_resid, wq_b).view(t, @HEADS@, @D@)
    k = F.layer_norm(F.linear(hidden_states, wk), (@D@,), k_norm_weight, k_norm_bias, 1e-06)
    cos, sin = _angles(positions, @YARN@, hidden_states)
    # the indexer's RoPE is the half-split (non-interleaved) one, on the first qk_rope_head_dim columns
    q_rot = q[..., :rope].to(acc) * cos[:, None] + _rotate_half(q[..., :rope].to(acc)) * sin[:, None]
    k_rot = k[..., :rope].to(acc) * cos + _rotate_half(k[..., :rope].to(acc)) * sin
    q = torch.cat((q_rot.to(q.dtype), q[..., rope:]), dim=-1)
    k = torch.cat((k_rot.to(k.dtype), k[..., rope:]), dim=-1)
    weights = F.linear(hidden_states, weights_proj).to(acc) * @HEADS@ ** -0.5
    return q, k, weights
'''


def indexer_projections(m) -> ProblemDraft:
    c = m.config
    h, heads, d, rope, q_rank = c["hidden_size"], c["index_n_heads"], c["index_head_dim"], c["qk_rope_head_dim"], \
        c["q_lora_rank"]
    text = (f"{m.name} sparse-attention indexer projections (DeepseekV32Indexer.forward in transformers' "
            f"modeling_deepseek_v32.py up to the scoring): index queries wq_b(q_resid) from the MLA query's "
            f"q_lora_rank {q_rank} residual, index_n_heads {heads} x index_head_dim {d}; one index key "
            f"LayerNorm(wk(x)) (eps 1e-6) per token; half-split RoPE on the first qk_rope_head_dim {rope} columns "
            "with the model's yarn frequencies at each token's position; per-head weights weights_proj(x) * "
            "index_n_heads^-0.5 in fp32. The keys are what the indexer caches.")
    d_ = draft(_cite(m, "hidden_size", "index_n_heads", "index_head_dim", "qk_rope_head_dim", "q_lora_rank",
                     "rope_scaling.factor"),
               f"{slug(m)}_indexer_projections_h{heads}_d{d}", "sparse_attention_indexer_projections", text,
               {"num_tokens": (None, "tokens"), "hidden_size": (h, "hidden_size"), "q_lora_rank": (q_rank, "q_lora_rank"),
                "index_q_dim": (heads * d, "index_n_heads x index_head_dim"), "index_heads": (heads, "index_n_heads"),
                "index_dim": (d, "index_head_dim")},
               {"hidden_states": _bf(["num_tokens", "hidden_size"]), "q_resid": _bf(["num_tokens", "q_lora_rank"]),
                "wq_b": _bf(["index_q_dim", "q_lora_rank"], q_rank ** -0.5),
                "wk": _bf(["index_dim", "hidden_size"], h ** -0.5),
                "k_norm_weight": _bf(["index_dim"], 0.1, 1.0), "k_norm_bias": _bf(["index_dim"], 0.1),
                "weights_proj": _bf(["index_heads", "hidden_size"], h ** -0.5),
                "positions": (["num_tokens"], "int64", _POSITIONS.replace("@MAXPOS@", "163840"))},
               {"index_query": (["num_tokens", "index_heads", "index_dim"], "bfloat16"),
                "index_key": (["num_tokens", "index_dim"], "bfloat16"),
                "head_weights": (["num_tokens", "index_heads"], "float32")},
               _body(_INDEXER_PROJ.replace("@YARN@", _yarn_call("hidden_states.device"))), [],
               subs={"ROPE": rope, "HEADS": heads, "D": d})
    return _tiers(d_, "L2", _tok(TOKENS), _tok(CPU_TOKENS), ["mla", "rope_kv"], "indexer_projections")


_GLM_ROPE_KV = '''@torch.no_grad()
def run(query, key, value, positions):
    rot = @ROT@
    inv_freq = 1.0 / (@THETA@ ** (torch.arange(0, rot, 2, device=query.device, dtype=torch.float64) / rot))
    cos, sin = _angles(positions, inv_freq, query)
    cos, sin = cos[:, None], sin[:, None]

    def rope(x):
        xf = x.to(cos.dtype)
        rotated = xf[..., :rot] * cos + _rotate_half(xf[..., :rot]) * sin
        return torch.cat((rotated.to(x.dtype), x[..., rot:]), dim=-1)
    # the KV-cache rows of the new tokens, [tokens, 2 (k, v), kv heads, head_dim]; a kernel stores them in place
    return rope(query), torch.stack((rope(key), value), dim=1)
'''


def glm_rope_kv_write(m) -> ProblemDraft:
    c = m.config
    kv, d = c["num_key_value_heads"], c["head_dim"]
    rot = int(d * c["partial_rotary_factor"])
    heads = 96  # num_attention_heads (cited below)
    text = (f"{m.name} partial RoPE and KV-cache write (apply_rotary_pos_emb in transformers' modeling_glm4_moe.py: "
            f"rotate-half RoPE on the first head_dim x partial_rotary_factor = {rot} of {d} columns, the rest passed "
            f"through; rope_theta {c['rope_theta']}; vLLM fuses it with reshape_and_cache): rotates the queries "
            f"(num_attention_heads {heads}) and keys (num_key_value_heads {kv}) of the new tokens at their positions "
            "and returns the rotated queries and the rows written into the KV cache (rotated keys and the values), "
            "one per token in cache layout.")
    m2 = dataclasses.replace(_cite(m, "num_key_value_heads", "head_dim", "partial_rotary_factor", "rope_theta"),
                             config={**_cite(m, "num_key_value_heads", "head_dim", "partial_rotary_factor",
                                             "rope_theta").config, "num_attention_heads": heads})
    d_ = draft(m2, f"{slug(m)}_partial_rope_kv_write_h{heads}_kv{kv}_d{d}_r{rot}", "rope_kv_cache_write", text,
               {"num_tokens": (None, "new tokens"), "num_heads": (heads, "num_attention_heads"),
                "num_kv_heads": (kv, "num_key_value_heads"), "head_dim": (d, "head_dim"), "two": (2, "key, value")},
               {"query": _bf(["num_tokens", "num_heads", "head_dim"]), "key": _bf(["num_tokens", "num_kv_heads", "head_dim"]),
                "value": _bf(["num_tokens", "num_kv_heads", "head_dim"]),
                "positions": (["num_tokens"], "int64", _POSITIONS.replace("@MAXPOS@", "202752"))},
               {"query_out": (["num_tokens", "num_heads", "head_dim"], "bfloat16"),
                "kv_rows": (["num_tokens", "two", "num_kv_heads", "head_dim"], "bfloat16")},
               _body(_GLM_ROPE_KV), [], subs={"ROT": rot, "THETA": float(c["rope_theta"])})
    return _tiers(d_, "L1", _tok(TOKENS), _tok(CPU_TOKENS), ["rope_kv"], "rope_reshape_and_cache")


_LLAMA4_ROPE = '''@torch.no_grad()
def run(query, key, positions):
    inv_freq = _llama3_inv_freq(@D@, @THETA@, @FACTOR@, @LOW@, @HIGH@, @ORIG@, query.device)
    freqs = positions.to(torch.float64)[:, None] * inv_freq
    cos, sin = freqs.cos().to(_acc(query))[:, None], freqs.sin().to(_acc(query))[:, None]

    def rope_l2norm(x):
        # apply_rotary_emb: (x[2i], x[2i+1]) as a complex number times e^(i theta), written with real arithmetic
        pairs = x.to(cos.dtype).unflatten(-1, (-1, 2))
        re, im = pairs[..., 0], pairs[..., 1]
        x = torch.stack((re * cos - im * sin, re * sin + im * cos), dim=-1).flatten(-2).to(x.dtype)
        xf = x.to(cos.dtype)  # Llama4TextL2Norm: RMS normalisation without a weight, in fp32
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + @EPS@)).to(x.dtype)
    return rope_l2norm(query), rope_l2norm(key)
'''


def llama4_rope_qk_norm(m) -> ProblemDraft:
    c = m.config
    heads, kv, d = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    text = (f"{m.name} RoPE + QK L2-norm of a RoPE layer (Llama4TextAttention.forward in transformers' "
            f"modeling_llama4.py: apply_rotary_emb, then Llama4TextL2Norm because use_qk_norm): queries "
            f"(num_attention_heads {heads}) and keys (num_key_value_heads {kv}) of head_dim {d} rotated pairwise "
            f"((x[2i], x[2i+1]) as complex numbers) with llama3-scaled frequencies (rope_theta {c['rope_theta']}, "
            f"factor {c['rope_scaling.factor']}, low/high_freq_factor {c['rope_scaling.low_freq_factor']}/"
            f"{c['rope_scaling.high_freq_factor']}, original_max_position_embeddings "
            f"{c['rope_scaling.original_max_position_embeddings']}), then RMS-normalised without a weight (eps = "
            f"rms_norm_eps {c['rms_norm_eps']}). Every fourth layer is NoPE (iRoPE) and skips both.")
    subs = {"D": d, "THETA": float(c["rope_theta"]), "FACTOR": float(c["rope_scaling.factor"]),
            "LOW": float(c["rope_scaling.low_freq_factor"]), "HIGH": float(c["rope_scaling.high_freq_factor"]),
            "ORIG": int(c["rope_scaling.original_max_position_embeddings"]), "EPS": c["rms_norm_eps"]}
    d_ = draft(_cite(m, "num_attention_heads", "num_key_value_heads", "head_dim", "rope_theta", "rope_scaling.factor",
                     "rope_scaling.low_freq_factor", "rope_scaling.high_freq_factor",
                     "rope_scaling.original_max_position_embeddings", "rms_norm_eps"),
               f"{slug(m)}_rope_qk_l2norm_h{heads}_kv{kv}_d{d}", "rope", text,
               {"num_tokens": (None, "tokens"), "num_heads": (heads, "num_attention_heads"),
                "num_kv_heads": (kv, "num_key_value_heads"), "head_dim": (d, "head_dim")},
               {"query": _bf(["num_tokens", "num_heads", "head_dim"]), "key": _bf(["num_tokens", "num_kv_heads", "head_dim"]),
                "positions": (["num_tokens"], "int64", _POSITIONS.replace("@MAXPOS@", "262144"))},
               {"query_out": (["num_tokens", "num_heads", "head_dim"], "bfloat16"),
                "key_out": (["num_tokens", "num_kv_heads", "head_dim"], "bfloat16")},
               _body(_LLAMA4_ROPE), [], subs=subs)
    return _tiers(d_, "L1", _tok(TOKENS), _tok(CPU_TOKENS), ["rope_kv"], "rope_qk_norm")


_PERMUTE = '''@torch.no_grad()
def run(hidden_states, topk_ids):
    flat = topk_ids.reshape(-1).to(torch.int64)
    order = torch.sort(flat, stable=True)[1]  # by expert; within an expert, by (token, slot)
    counts = torch.zeros(@E@, device=flat.device, dtype=torch.int64).index_add_(0, flat, torch.ones_like(flat))
    offsets = torch.cat((counts.new_zeros(1), torch.cumsum(counts, dim=0)))
    return hidden_states[order // topk_ids.shape[1]], offsets
'''
_DISTINCT_EXPERTS = ("(lambda first: torch.cat([(first + j * (a['num_experts'] // shape[1])) % a['num_experts'] "
                     "for j in range(shape[1])], dim=1))(torch.randint(0, a['num_experts'], (shape[0], 1), "
                     "device=device))")


def moe_permute(m) -> ProblemDraft:
    c = m.config
    h, e, k = c["hidden_size"], c["num_experts"], c["num_experts_per_tok"]
    text = (f"{m.name} MoE dispatch permute (TensorRT-LLM's expandInputRowsKernel / vLLM's moe_permute): each token's "
            f"hidden state (hidden_size {h}) is copied once per chosen expert (num_experts_per_tok {k} of num_experts "
            f"{e}) into expert-contiguous order, ready for the grouped expert GEMM; rows of one expert are ordered by "
            "token, then slot (a stable sort of the flattened ids). Also returns each expert's start offset (E + 1 "
            "prefix sums of the counts).")
    d_ = draft(_cite(m, "hidden_size", "num_experts", "num_experts_per_tok"),
               f"{slug(m)}_moe_permute_e{e}_top{k}_h{h}", "moe_permute", text,
               {"num_tokens": (None, "tokens"), "hidden_size": (h, "hidden_size"), "top_k": (k, "num_experts_per_tok"),
                "num_experts": (e, "num_experts"), "num_rows": ("num_tokens * top_k", "routed rows"),
                "num_offsets": (e + 1, "num_experts + 1")},
               {"hidden_states": _bf(["num_tokens", "hidden_size"]),
                "topk_ids": (["num_tokens", "top_k"], "int32", _DISTINCT_EXPERTS)},
               {"permuted": (["num_rows", "hidden_size"], "bfloat16"), "expert_offsets": (["num_offsets"], "int64")},
               _body(_PERMUTE), [], subs={"E": e})
    return _tiers(d_, "L1", _tok(TOKENS_MOE), _tok(CPU_TOKENS), ["moe"], "moe_permute")


_FINALIZE = '''@torch.no_grad()
def run(expert_output, permuted_row, topk_weights, shared_output):
    acc = _acc(expert_output)
    routed = expert_output[permuted_row].to(acc)  # [tokens, top_k, hidden]
    out = (routed * topk_weights.to(acc)[..., None]).sum(dim=1) + shared_output.to(acc)
    return out.to(expert_output.dtype)
'''
_PERMUTATION = "torch.randperm(shape[0] * shape[1], device=device).view(shape)"


def moe_finalize(m) -> ProblemDraft:
    c = m.config
    h, k = c["hidden_size"], c["num_experts_per_tok"]
    text = (f"{m.name} MoE finalize (TensorRT-LLM's finalizeMoeRoutingKernel; the combine in Glm4MoeMoE.forward of "
            f"transformers' modeling_glm4_moe.py): the expert outputs, in expert-contiguous order, are gathered back "
            f"to their tokens through permuted_row, weighted by the top-{k} (num_experts_per_tok) routing weights "
            f"(sigmoid scores renormalised and times routed_scaling_factor {c['routed_scaling_factor']}, fp32), summed, "
            f"and the shared expert's output (n_shared_experts {c['n_shared_experts']}) is added; hidden_size {h}.")
    d_ = draft(_cite(m, "hidden_size", "num_experts_per_tok", "routed_scaling_factor", "n_shared_experts"),
               f"{slug(m)}_moe_finalize_top{k}_h{h}", "moe_finalize", text,
               {"num_tokens": (None, "tokens"), "hidden_size": (h, "hidden_size"), "top_k": (k, "num_experts_per_tok"),
                "num_rows": ("num_tokens * top_k", "routed rows")},
               {"expert_output": _bf(["num_rows", "hidden_size"]),
                "permuted_row": (["num_tokens", "top_k"], "int64", _PERMUTATION),
                "topk_weights": (["num_tokens", "top_k"], "float32", "torch.rand(shape, device=device) * 0.6"),
                "shared_output": _bf(["num_tokens", "hidden_size"])},
               {"output": (["num_tokens", "hidden_size"], "bfloat16")}, _body(_FINALIZE), [])
    return _tiers(d_, "L1", _tok(TOKENS_MOE), _tok(CPU_TOKENS), ["moe"], "moe_finalize")


_WKV5 = '''@torch.no_grad()
def run(receptance, key, value, time_decay, time_first, state):
    acc = torch.float64 if receptance.dtype == torch.float64 else torch.float32
    b, t, h, d = receptance.shape
    w = torch.exp(-torch.exp(time_decay.to(acc)))[:, :, None]  # [h, d, 1]: decay per key channel
    u = time_first.to(acc)[:, :, None]  # the bonus of the current token
    s = state.to(acc)
    out = torch.empty(b, t, h, d, device=receptance.device, dtype=receptance.dtype)
    for i in range(t):
        r = receptance[:, i].to(acc)[:, :, None, :]  # [b, h, 1, d]
        kv = key[:, i].to(acc)[..., :, None] * value[:, i].to(acc)[..., None, :]  # [b, h, d, d]
        out[:, i] = (r @ (u * kv + s))[:, :, 0].to(out.dtype)
        s = kv + w * s
    return out, s.to(state.dtype)
'''


def rwkv5_wkv(m) -> ProblemDraft:
    c = m.config
    d, hidden = c["head_size"], c["attention_hidden_size"]
    heads = hidden // d
    text = (f"{m.name} time-mix recurrence (WKV-5, RWKV v5.2: the torch path of the RWKV-5 reference "
            f"(RWKV-LM RWKV-v5 'RUN_CUDA_RWKV5' / mlc-llm's rwkv5 wkv): per head (attention_hidden_size {hidden} / "
            f"head_size {d} = {heads} heads) a [{d} x {d}] state S; each step y = r (u * k^T v + S), S = k^T v + w * S "
            f"with w = exp(-exp(time_decay)) per key channel and u = time_first. Runs over the sequence from the given "
            "state; returns the outputs and the final state. The recurrence runs in fp32.")
    shape = ["batch_size", "seq_len", "num_heads", "head_size"]
    d_ = draft(_cite(m, "head_size", "attention_hidden_size"), f"{slug(m)}_wkv5_recurrence_h{heads}_d{d}",
               "linear_attention_recurrence", text,
               {"batch_size": (None, "sequences"), "seq_len": (None, "time steps"), "num_heads": (heads, "heads"),
                "head_size": (d, "head_size")},
               {"receptance": _bf(shape), "key": _bf(shape, d ** -0.5), "value": _bf(shape),
                "time_decay": (["num_heads", "head_size"], "float32", "torch.rand(shape, device=device) * 5.0 - 6.0"),
                "time_first": (["num_heads", "head_size"], "float32", 0.3),
                "state": (["batch_size", "num_heads", "head_size", "head_size"], "float32", 0.5)},
               {"output": (shape, "bfloat16"), "final_state": (["batch_size", "num_heads", "head_size", "head_size"],
                                                               "float32")},
               _body(_WKV5), [])
    return _tiers(d_, "L1", _seqs(STEPS), _seqs(CPU_STEPS), ["ssm"], "wkv5")


_POSTNORM_BWD = '''def run(sublayer_output, weight, grad_output):
    with torch.enable_grad():
        h, w = (t.detach().requires_grad_() for t in (sublayer_output, weight))
        acc = _acc(h)
        hf = h.to(acc)
        normed = (w.to(acc) * (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + @EPS@))).to(h.dtype)
        return torch.autograd.grad(normed, (h, w), grad_output)
'''


def olmo2_postnorm_backward(m) -> ProblemDraft:
    c = m.config
    h = c["hidden_size"]
    text = (f"Backward of {m.name}'s post-norm residual branch (Olmo2DecoderLayer.forward in transformers' "
            f"modeling_olmo2.py: x + post_feedforward_layernorm(mlp(x)), likewise after attention): given the sublayer "
            f"output h, the norm weight and the gradient of the layer output, returns the gradients of h and of the "
            f"RMSNorm weight (summed over tokens); hidden_size {h}, rms_norm_eps {c['rms_norm_eps']}. (The residual's "
            "own gradient is grad_output itself.)")
    shape = ["num_tokens", "hidden_size"]
    d_ = draft(_cite(m, "hidden_size", "rms_norm_eps"), f"{slug(m)}_postnorm_backward_h{h}", "post_norm_backward",
               text, {"num_tokens": (None, "tokens in the micro-batch"), "hidden_size": (h, "hidden_size")},
               {"sublayer_output": _bf(shape), "weight": _bf(["hidden_size"], 0.1, 1.0), "grad_output": _bf(shape)},
               {"grad_sublayer_output": (shape, "bfloat16"), "grad_weight": (["hidden_size"], "bfloat16")},
               _body(_POSTNORM_BWD), [], backward=True, subs={"EPS": c["rms_norm_eps"]})
    cpu = (16, 64, 100, 128, 255, 512, 1000, 2048)
    return _tiers(d_, "L2", _tok(TOKENS), _tok(cpu), [], "rmsnorm_backward")


_NAS_FFN = '''@torch.no_grad()
def run(hidden_states, post_attention_layernorm, gate_proj, up_proj, down_proj):
    # attention no_op: the layer's input goes straight to the FFN's norm and residual
    x = _rmsnorm(hidden_states, post_attention_layernorm, @EPS@)
    mlp = F.linear(F.silu(F.linear(x, gate_proj)) * F.linear(x, up_proj), down_proj)
    return (hidden_states.to(_acc(mlp)) + mlp.to(_acc(mlp))).to(hidden_states.dtype)
'''


def nemotron_noop_attention_layer(m) -> ProblemDraft:
    c = m.config
    h = c["hidden_size"]
    ffn_mult = 0.5
    inter = -(-int(2 * ffn_mult * h / 3) // 256) * 256
    text = (f"{m.name} decoder layer whose attention the NAS removed (block_configs: 6 of the 80 layers have "
            f"attention no_op true and ffn_mult {ffn_mult}; DeciLMDecoderLayer.forward in the model's "
            f"modeling_decilm.py skips the attention and its norm): x + SwiGLU(RMSNorm(x)) with the FFN width "
            f"_ffn_mult_to_intermediate_size({ffn_mult}, hidden_size {h}) = multiple of 256 above int(2 x ffn_mult x "
            f"hidden / 3) = {inter}; rms_norm_eps {c['rms_norm_eps']}, hidden_act {c['hidden_act']}.")
    d_ = draft(_cite(m, "hidden_size", "rms_norm_eps", "hidden_act"),
               f"{slug(m)}_noop_attention_ffn_layer_h{h}_i{inter}", "decoder_layer", text,
               {"num_tokens": (None, "tokens"), "hidden_size": (h, "hidden_size"),
                "intermediate_size": (inter, f"ffn_mult {ffn_mult} -> FFN width")},
               {"hidden_states": _bf(["num_tokens", "hidden_size"]),
                "post_attention_layernorm": _bf(["hidden_size"], 0.1, 1.0),
                "gate_proj": _bf(["intermediate_size", "hidden_size"], h ** -0.5),
                "up_proj": _bf(["intermediate_size", "hidden_size"], h ** -0.5),
                "down_proj": _bf(["hidden_size", "intermediate_size"], inter ** -0.5)},
               {"output": (["num_tokens", "hidden_size"], "bfloat16")}, _body(_NAS_FFN), [],
               subs={"EPS": c["rms_norm_eps"]})
    return _tiers(d_, "L2", _tok(TOKENS_MOE), _tok(CPU_TOKENS), [], "nas_ffn_layer")


# ============================================ the problems =========================================================

def _l1_attention() -> list[ProblemDraft]:
    g2 = GEMMA2_27B.config
    g2_scale = g2["query_pre_attn_scalar"] ** -0.5
    return [
        attention_prefill(
            QWEN25_14B, "qwen25-14b_gqa_prefill_h40kv8_d128", "flash_attention_prefill",
            "Qwen2.5-14B causal grouped-query attention over a prompt (Qwen2Attention.forward in transformers' "
            "modeling_qwen2.py, sdpa path): num_attention_heads 40 share num_key_value_heads 8, head_dim 128 "
            "(hidden_size / heads), scale head_dim^-0.5; q/k already rotated.",
            heads=40, kv_heads=8, d=128, gpu=PREFILL,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim")),
        attention_decode(
            QWEN25_32B, "qwen25-32b_gqa_decode_h40kv8_d128", "flash_attention_decode",
            "Qwen2.5-32B decode attention (Qwen2Attention.forward with a KV cache, one new token per sequence): "
            "num_attention_heads 40 over num_key_value_heads 8 cached heads, head_dim 128, every cached position "
            "visible.", heads=40, kv_heads=8, d=128,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim")),
        attention_decode(
            LLAMA_32_3B, "llama-32-3b_gqa_decode_h24kv8_d128", "flash_attention_decode",
            "Llama-3.2-3B decode attention (LlamaAttention.forward in transformers' modeling_llama.py with a KV "
            "cache): num_attention_heads 24 over num_key_value_heads 8, head_dim 128 (3 query heads per KV head).",
            heads=24, kv_heads=8, d=128, cite=("num_attention_heads", "num_key_value_heads", "head_dim")),
        attention_backward(
            SMOLLM2, "smollm2-17b_mha_attention_backward_h32_d64",
            "Backward of SmolLM2-1.7B's causal multi-head attention core (LlamaAttention in transformers, MHA: "
            "num_attention_heads 32 = num_key_value_heads 32, head_dim 64) as in training: given q, k, v and "
            "grad_output, returns dq, dk, dv.", heads=32, kv_heads=32, d=64, gpu=PREFILL,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim")),
        attention_prefill(
            SMOLLM2, "smollm2-17b_mha_prefill_h32_d64", "flash_attention_prefill",
            "SmolLM2-1.7B causal multi-head attention over a prompt (LlamaAttention.forward, MHA: "
            "num_attention_heads 32 = num_key_value_heads 32, head_dim 64).", heads=32, kv_heads=32, d=64,
            gpu=PREFILL, cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim")),
        attention_prefill(
            GEMMA2_27B, "gemma-2-27b_softcap_sliding_prefill_h32kv16_d128", "softcap_sliding_window_attention",
            f"Gemma-2-27B local-attention layer over a prompt (Gemma2Attention.forward and eager_attention_forward in "
            f"transformers' modeling_gemma2.py): scores scaled by query_pre_attn_scalar^-0.5 = 144^-0.5 (not "
            f"head_dim^-0.5), soft-capped tanh(s / 50) x 50 (attn_logit_softcapping 50.0), causal within a "
            f"sliding_window of 4096 positions; num_attention_heads 32 over num_key_value_heads 16, head_dim 128.",
            heads=32, kv_heads=16, d=128, gpu=PREFILL_SHORT, scale=g2_scale, softcap=g2["attn_logit_softcapping"],
            window=g2["sliding_window"], cite=("num_attention_heads", "num_key_value_heads", "head_dim",
                                               "attn_logit_softcapping", "query_pre_attn_scalar", "sliding_window")),
        attention_decode(
            GEMMA2_27B, "gemma-2-27b_softcap_sliding_decode_h32kv16_d128", "softcap_sliding_window_decode",
            "Gemma-2-27B local-attention layer, one decode step (Gemma2Attention.forward with a sliding-window "
            "cache): the new token sees the last sliding_window 4096 cached positions; scores scaled by "
            "query_pre_attn_scalar^-0.5 = 144^-0.5 and soft-capped tanh(s / 50) x 50; num_attention_heads 32 over "
            "num_key_value_heads 16, head_dim 128.", heads=32, kv_heads=16, d=128, scale=g2_scale,
            softcap=g2["attn_logit_softcapping"], window=g2["sliding_window"],
            cite=("num_attention_heads", "num_key_value_heads", "head_dim", "attn_logit_softcapping",
                  "query_pre_attn_scalar", "sliding_window")),
        attention_decode(
            FALCON_180B, "falcon-180b_gqa_decode_tp8_h29kv1_d64", "flash_attention_decode",
            "Falcon-180B decode attention on one tensor-parallel rank (FalconAttention.forward in transformers' "
            "modeling_falcon.py, new_decoder_architecture, KV cache): num_attention_heads 232 and "
            "num_key_value_heads 8 split over TP=8 give 29 query heads sharing 1 KV head per rank, head_dim 64.",
            heads=29, kv_heads=1, d=64, cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim"),
            gpu=DECODE_ONE_KV_HEAD),
        attention_prefill(
            FALCON_7B, "falcon-7b_mqa_prefill_h71kv1_d64", "flash_attention_prefill",
            "Falcon-7B causal multi-query attention over a prompt (FalconAttention.forward in transformers' "
            "modeling_falcon.py, multi_query): num_attention_heads 71 share num_key_value_heads 1, head_dim 64.",
            heads=71, kv_heads=1, d=64, gpu=PREFILL,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim")),
        attention_prefill(
            FALCON3_7B, "falcon3-7b-base_gqa_prefill_h12kv4_d256", "flash_attention_prefill",
            "Falcon3-7B-Base causal grouped-query attention with head_dim 256 (a Llama-architecture model: "
            "LlamaAttention.forward): num_attention_heads 12 over num_key_value_heads 4.",
            heads=12, kv_heads=4, d=256, gpu=PREFILL,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim")),
        attention_backward(
            FALCON3_7B, "falcon3-7b-base_gqa_attention_backward_h12kv4_d256",
            "Backward of Falcon3-7B-Base's causal GQA attention core (num_attention_heads 12, num_key_value_heads "
            "4, head_dim 256) as in training: dq, dk, dv given grad_output (dk/dv summed over the 3 query heads "
            "sharing a KV head).", heads=12, kv_heads=4, d=256, gpu=PREFILL,
            cite=("num_attention_heads", "num_key_value_heads", "derived.head_dim")),
        attention_prefill(
            LLAMA4_SCOUT, "llama-4-scout-17b-16e-instruct_chunked_attention_prefill_h40kv8_d128", "chunked_attention",
            "Llama-4-Scout chunked local attention over a prompt (the RoPE layers of Llama4TextModel: "
            "create_chunked_causal_mask in transformers' masking_utils): a token attends causally only within its "
            "attention_chunk_size 8192 chunk; num_attention_heads 40 over num_key_value_heads 8, head_dim 128 "
            "(q/k already rotated and L2-normalised). CPU-tier prompts are shorter than a chunk.",
            heads=40, kv_heads=8, d=128, gpu=PREFILL_SHORT[:13] + ((1, 12288), (2, 10240), (1, 16384)),
            chunk=LLAMA4_SCOUT.config["attention_chunk_size"],
            cite=("num_attention_heads", "num_key_value_heads", "head_dim", "attention_chunk_size")),
        sparse_mla(DEEPSEEK_V32),
        lightning_indexer(DEEPSEEK_V32),
    ]


def _l1_rope_and_routing() -> list[ProblemDraft]:
    return [
        llama3_rope(LLAMA_31_405B, "llama-31-405b_llama3_rope_h128kv8_d128", 128, 8, 128,
                    "Llama-3.1-405B rotary embedding with llama3 frequency scaling, computed from position ids as "
                    "FlashInfer's apply_llama31_rope_pos_ids does (transformers' _compute_llama3_parameters and "
                    "apply_rotary_pos_emb): rope_theta 500000, factor 8, low_freq_factor 1, high_freq_factor 4, "
                    "original_max_position_embeddings 8192; rotate-half layout on num_attention_heads 128 query and "
                    "num_key_value_heads 8 key heads of head_dim 128, angles in float64.",
                    ("num_attention_heads", "num_key_value_heads", "derived.head_dim", "rope_theta",
                     "rope_scaling.factor", "rope_scaling.low_freq_factor", "rope_scaling.high_freq_factor",
                     "rope_scaling.original_max_position_embeddings")),
        glm_rope_kv_write(GLM47),
        llama4_rope_qk_norm(LLAMA4_SCOUT),
        mla_cache_write(DEEPSEEK_V32),
        router(QWEN3_CODER, "qwen3-coder-480b-a35b-instruct_router_softmax_top8_e160", "moe_router_softmax_topk",
               "Qwen3-Coder-480B-A35B router (Qwen3MoeSparseMoeBlock / Qwen3MoeTopKRouter in transformers' "
               "modeling_qwen3_moe.py): gate logits over num_experts 160, softmax, top-8 (num_experts_per_tok), "
               "renormalised (norm_topk_prob). The gate GEMM is accumulated and kept in fp32 (bf16-rounded logits tie "
               "at the top-8 cut for a few percent of tokens, so the selection would depend on expert order). Returns "
               "the dense routing weights (zero for unselected experts) and the logits.",
               kind="softmax", experts=160, topk=8, hidden=6144,
               cite=("hidden_size", "num_experts", "num_experts_per_tok", "norm_topk_prob")),
        router(GLM47, "glm-47_router_sigmoid_noaux_top8_e160", "moe_router_sigmoid_noaux",
               "GLM-4.7 router (Glm4MoeTopkRouter.forward in transformers' modeling_glm4_moe.py): fp32 gate GEMM over "
               "num_experts 160, sigmoid scores, experts chosen by score + e_score_correction_bias (n_group 1, "
               "topk_group 1: no group stage), top-8 (num_experts_per_tok), the chosen raw scores renormalised "
               "(norm_topk_prob) and times routed_scaling_factor 2.5. Returns dense routing weights and the logits.",
               kind="sigmoid", experts=160, topk=8, hidden=5120, weight_dtype="float32", scale=2.5,
               cite=("hidden_size", "num_experts", "num_experts_per_tok", "n_group", "topk_group", "norm_topk_prob",
                     "routed_scaling_factor")),
        router(DEEPSEEK_V32, "deepseek-v32_router_group_top8_e256_g8", "moe_router_grouped_topk",
               "DeepSeek-V3.2 router (noaux_tc; DeepseekV3TopkRouter / DeepseekV3MoE.route_tokens_to_experts in "
               "transformers): fp32 gate GEMM over num_experts 256, sigmoid scores + e_score_correction_bias; the "
               "experts form n_group 8 groups ranked by the sum of their top-2 biased scores, only topk_group 4 groups "
               "stay eligible, top-8 (num_experts_per_tok) of those; weights are the raw sigmoid scores renormalised "
               "(norm_topk_prob) times routed_scaling_factor 2.5. Returns dense routing weights and the logits.",
               kind="sigmoid", experts=256, topk=8, hidden=7168, weight_dtype="float32", groups=8, topk_group=4,
               scale=2.5, cite=("hidden_size", "num_experts", "num_experts_per_tok", "n_group", "topk_group",
                                "norm_topk_prob", "routed_scaling_factor")),
        router(LLAMA4_SCOUT, "llama-4-scout-17b-16e-instruct_router_sigmoid_top1_e16", "moe_router_top1_sigmoid",
               "Llama-4-Scout router (Llama4Router.forward in transformers' modeling_llama4.py): gate logits over "
               "num_experts 16 (fp32 here), top-1 (num_experts_per_tok), the chosen expert's score is sigmoid(logit) "
               "(no softmax; the others are sigmoid(-inf) = 0). Returns dense routing scores and the logits.",
               kind="llama4", experts=16, topk=1, hidden=5120,
               cite=("hidden_size", "num_experts", "num_experts_per_tok")),
        router(MIXTRAL_8X22B, "mixtral-8x22b-v01_router_softmax_top2_e8", "moe_router_softmax_topk",
               "Mixtral-8x22B router (MixtralSparseMoeBlock / MixtralTopKRouter in transformers' modeling_mixtral.py): "
               "gate logits over num_experts 8 (accumulated and kept in fp32), softmax, top-2 (num_experts_per_tok), "
               "renormalised. Returns the dense routing weights and the logits.",
               kind="softmax", experts=8, topk=2, hidden=6144,
               cite=("hidden_size", "num_experts", "num_experts_per_tok")),
        moe_permute(QWEN3_CODER),
        moe_finalize(GLM47),
        rwkv5_wkv(RWKV5_3B),
    ]


def _l2() -> list[ProblemDraft]:
    q72, l405, c = QWEN25_72B.config, LLAMA_31_405B.config, COMMAND_R.config
    llama3 = (f"_llama3_inv_freq(128, {float(l405['rope_theta'])!r}, {float(l405['rope_scaling.factor'])!r}, "
              f"{float(l405['rope_scaling.low_freq_factor'])!r}, {float(l405['rope_scaling.high_freq_factor'])!r}, "
              f"{l405['rope_scaling.original_max_position_embeddings']}, x.device)")
    return [
        attention_block(
            QWEN25_72B, "qwen25-72b_attention_block_tp8_h8kv1_d128", "attention_block",
            "Qwen2.5-72B self-attention sublayer for prefill on one tensor-parallel rank (Qwen2Attention.forward in "
            "transformers' modeling_qwen2.py): q/k/v projections with biases (attention_bias), rotate-half RoPE "
            "(rope_theta 1000000, positions 0..seq_len-1), causal GQA, o_proj. TP=8: 8 of num_attention_heads 64 and "
            "1 of num_key_value_heads 8 per rank, head_dim 128; the output is the rank's partial o_proj sum before "
            "the all-reduce (hidden_size 8192).",
            hidden=8192, heads=8, kv_heads=1, d=128, inv_freq=_plain_inv_freq(128, q72["rope_theta"]), bias=True,
            cite=("hidden_size", "num_attention_heads", "num_key_value_heads", "derived.head_dim", "rope_theta",
                  "attention_bias")),
        attention_block(
            LLAMA_31_405B, "llama-31-405b_attention_block_tp8_h16kv1_d128", "attention_block",
            "Llama-3.1-405B self-attention sublayer for prefill on one tensor-parallel rank (LlamaAttention.forward "
            "in transformers' modeling_llama.py): q/k/v projections, RoPE with llama3 frequency scaling (rope_theta "
            "500000, factor 8, low/high_freq_factor 1/4, original_max_position_embeddings 8192), causal GQA, o_proj. "
            "TP=8: 16 of num_attention_heads 128 and 1 of num_key_value_heads 8 per rank, head_dim 128; the output is "
            "the rank's partial o_proj sum before the all-reduce (hidden_size 16384).",
            hidden=16384, heads=16, kv_heads=1, d=128, inv_freq=llama3, extra_families=("rope_kv",),
            cite=("hidden_size", "num_attention_heads", "num_key_value_heads", "derived.head_dim", "rope_theta",
                  "rope_scaling.factor", "rope_scaling.low_freq_factor", "rope_scaling.high_freq_factor",
                  "rope_scaling.original_max_position_embeddings")),
        attention_block(
            OLMO2_32B, "olmo-2-0325-32b_postnorm_qknorm_attention_h40kv8_d128", "attention_block",
            "OLMo-2-0325-32B attention sublayer with its residual (Olmo2Attention.forward and "
            "Olmo2DecoderLayer.forward in transformers' modeling_olmo2.py): q_norm/k_norm are RMSNorms over the whole "
            "projected q (40 x 128 = 5120) and k (8 x 128) before the heads are split; rotate-half RoPE (rope_theta "
            "500000); causal GQA (num_attention_heads 40, num_key_value_heads 8, head_dim 128); o_proj; then the "
            "post-norm: x + post_attention_layernorm(attn) (rms_norm_eps 1e-6). The whole layer on one device (the "
            "norms span every head, so a head shard would not be a real function).",
            hidden=5120, heads=40, kv_heads=8, d=128, inv_freq=_plain_inv_freq(128, OLMO2_32B.config["rope_theta"]),
            qk_norm=True, post_norm=True, residual=1.0, eps=1e-06,
            cite=("hidden_size", "num_attention_heads", "num_key_value_heads", "derived.head_dim", "rms_norm_eps",
                  "rope_theta")),
        attention_block(
            OLMO3_7B, "olmo-3-7b_sliding_postnorm_attention_h32_d128", "attention_block",
            "OLMo-3-7B sliding-attention layer with its residual (Olmo3Attention.forward and Olmo3DecoderLayer in "
            "transformers' modeling_olmo3.py; 24 of its 32 layers, layer_types 3 sliding : 1 full): q/k RMSNorm over "
            "the whole projection, RoPE with the default (unscaled) frequencies the sliding layers use (YaRN applies "
            "to the full-attention layers only) and rope_theta 500000, causal attention within sliding_window 4096 "
            "(MHA: num_attention_heads 32 = num_key_value_heads 32, head_dim 128), o_proj, then x + "
            "post_attention_layernorm(attn). rope_theta, sliding_window and rms_norm_eps 1e-6 are from the model's "
            "config.json / Olmo3Config defaults (the vendored record's excerpt ends before them).",
            hidden=4096, heads=32, kv_heads=32, d=128, inv_freq=_plain_inv_freq(128, 500000.0), qk_norm=True,
            post_norm=True, residual=1.0, window=4096, eps=1e-06, gpu=PREFILL_SHORT,
            cite=("hidden_size", "num_attention_heads", "num_key_value_heads", "derived.head_dim",
                  "max_position_embeddings")),
        attention_block(
            GRANITE_8B, "granite-32-8b-instruct_attention_multipliers_h32kv8_d128", "attention_block",
            "Granite-3.2-8B attention sublayer with its residual (GraniteAttention and GraniteDecoderLayer.forward in "
            "transformers' modeling_granite.py): input RMSNorm (rms_norm_eps 1e-5), q/k/v projections, RoPE "
            "(rope_theta 1e7), causal GQA (num_attention_heads 32, num_key_value_heads 8, head_dim 128) with the "
            "softmax scale attention_multiplier 0.0078125 instead of head_dim^-0.5, o_proj, and the residual scaled "
            "by residual_multiplier: x + 0.22 x attn. q_proj/k_proj are drawn 4x the fan-in scale (as trained muP "
            "weights are larger), so that the small multiplier still gives a peaked softmax.",
            hidden=4096, heads=32, kv_heads=8, d=128, inv_freq=_plain_inv_freq(128, GRANITE_8B.config["rope_theta"]),
            pre_norm=True, residual=GRANITE_8B.config["residual_multiplier"], eps=1e-05,
            scale=GRANITE_8B.config["attention_multiplier"], qk_gain=4.0,
            cite=("hidden_size", "num_attention_heads", "num_key_value_heads", "derived.head_dim",
                  "attention_multiplier", "residual_multiplier", "rms_norm_eps", "rope_theta")),
        parallel_block(
            FALCON_40B, "falcon-40b_parallel_block_tp8_h16kv1_d64", "parallel_attention_mlp",
            "Falcon-40B decoder layer on one tensor-parallel rank (FalconDecoderLayer.forward in transformers' "
            "modeling_falcon.py, new_decoder_architecture: ln_attn and ln_mlp LayerNorms with bias, eps 1e-5, "
            "attention and MLP in parallel on the same input): causal GQA with rotate-half RoPE (rope_theta 10000, "
            "FalconConfig's default), 16 of num_attention_heads 128 and 1 of num_key_value_heads 8 per rank (TP=8), "
            "head_dim 64; MLP dense_4h_to_h(gelu(dense_h_to_4h(x))) of width 4 x hidden_size (FalconConfig's "
            "ffn_hidden_size default) = 32768, 4096 per rank; no biases. Returns attention + MLP, the rank's partial "
            "sum before the all-reduce (the residual is added after it).",
            hidden=8192, heads=16, kv_heads=1, d=64, inter=4096, theta=10000.0, style="falcon",
            cite=("hidden_size", "num_attention_heads", "num_key_value_heads", "derived.head_dim")),
        parallel_block(
            COMMAND_R, "command-r-v01_parallel_block_tp8_h8_d128", "parallel_attention_mlp",
            "Command-R-v01 decoder layer on one tensor-parallel rank (CohereDecoderLayer.forward in transformers' "
            "modeling_cohere.py): one LayerNorm without bias (layer_norm_eps 1e-5, fp32) feeds attention and "
            "SwiGLU MLP in parallel; RoPE in Cohere's interleaved layout (frequencies repeat_interleave'd, pairs "
            "(x[2i], x[2i+1]) rotated; rope_theta 8000000); MHA (num_attention_heads 64 = num_key_value_heads 64, "
            "head_dim 128): 8 heads per rank at TP=8; intermediate_size 22528, 2816 per rank. Returns attention + "
            "MLP, the rank's partial sum before the all-reduce (the residual is added after it).",
            hidden=8192, heads=8, kv_heads=8, d=128, inter=c["intermediate_size"] // 8, theta=c["rope_theta"],
            style="cohere", cite=("hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads",
                                  "derived.head_dim", "layer_norm_eps", "rope_theta")),
        mla_absorbed_decode(DEEPSEEK_V32, 8),
        indexer_projections(DEEPSEEK_V32),
        olmo2_postnorm_backward(OLMO2_13B),
        nemotron_noop_attention_layer(NEMOTRON_SUPER),
        moe_experts(QWEN3_CODER, "qwen3-coder-480b-a35b-instruct_moe_ep32tp4_e5of160_top8_i640", "fused_moe",
                    "Qwen3-Coder-480B-A35B MoE layer on one rank of an expert- and tensor-parallel deployment "
                    "(Qwen3MoeSparseMoeBlock in transformers' modeling_qwen3_moe.py; TensorRT-LLM's moe_ep_size x "
                    "moe_tp_size mapping): EP=32 puts experts 0..4 of num_experts 160 here, TP=4 splits each expert's "
                    "moe_intermediate_size 2560 to 640. The routing (top-8 = num_experts_per_tok expert ids and their "
                    "renormalised softmax weights, norm_topk_prob) comes from the router problem; each local expert is a SwiGLU over its "
                    "tokens (hidden_size 6144). The tokens are those dispatched to this rank (each routes to at least "
                    "one local expert); the output is the rank's partial sum before the all-reduce / combine.",
                    kind="softmax", hidden=6144, experts=160, local=5, inter=640, topk=8,
                    cite=("hidden_size", "num_experts", "num_experts_per_tok", "moe_intermediate_size",
                          "norm_topk_prob")),
        moe_experts(GLM47, "glm-47_moe_shared_ep32tp2_e5of160_top8_i768", "fused_moe",
                    "GLM-4.7 MoE layer on one expert/tensor-parallel rank (Glm4MoeMoE.forward and Glm4MoeTopkRouter in "
                    "transformers' modeling_glm4_moe.py): the router problem's top-8 of num_experts 160 (ids, and the "
                    "chosen sigmoid scores renormalised and times routed_scaling_factor 2.5) weight the experts; EP=32: experts 0..4 here, TP=2 splits "
                    "moe_intermediate_size 1536 to 768; plus the n_shared_experts 1 shared SwiGLU expert (also 768 "
                    "per rank) on every token; hidden_size 5120. Output: the rank's partial sum before the all-reduce.",
                    kind="sigmoid", hidden=5120, experts=160, local=5, inter=768, topk=8, shared_inter=768, scale=2.5,
                    cite=("hidden_size", "num_experts", "num_experts_per_tok", "moe_intermediate_size", "n_group",
                          "n_shared_experts", "norm_topk_prob", "routed_scaling_factor")),
        moe_experts(DEEPSEEK_V32, "deepseek-v32_moe_shared_ep64tp4_e4of256_top8_i512", "fused_moe",
                    "DeepSeek-V3.2 MoE layer on one expert/tensor-parallel rank (DeepseekV3MoE in transformers; "
                    "noaux_tc routing from the router problem: top-8 (num_experts_per_tok) of num_experts 256 within "
                    "topk_group 4 of n_group 8 groups, sigmoid scores renormalised and times routed_scaling_factor 2.5); EP=64: experts 0..3 here, TP=4 splits "
                    "moe_intermediate_size 2048 to 512; plus the shared expert (n_shared_experts 1, 512 per rank); "
                    "hidden_size 7168. Output: the rank's partial sum before the all-reduce.",
                    kind="sigmoid", hidden=7168, experts=256, local=4, inter=512, topk=8, shared_inter=512, groups=8,
                    topk_group=4, scale=2.5,
                    cite=("hidden_size", "num_experts", "num_experts_per_tok", "moe_intermediate_size", "n_group",
                          "topk_group", "n_shared_experts", "routed_scaling_factor")),
        moe_experts(LLAMA4_SCOUT, "llama-4-scout-17b-16e-instruct_moe_shared_ep8tp8_e2of16_top1_i1024", "fused_moe",
                    "Llama-4-Scout MoE layer on one expert/tensor-parallel rank (Llama4TextMoe.forward in transformers' "
                    "modeling_llama4.py): each token's top-1 of num_experts 16 (from the router problem) with its "
                    "score sigmoid(logit), which multiplies the expert's INPUT (not its output), SwiGLU experts of intermediate_size 8192 (TP=8: "
                    "1024 here; EP=8: experts 0..1), plus the shared expert (intermediate_size 8192, 1024 per rank) on "
                    "every token; hidden_size 5120. Output: the rank's partial sum before the all-reduce.",
                    kind="llama4", hidden=5120, experts=16, local=2, inter=1024, topk=1, shared_inter=1024,
                    cite=("hidden_size", "num_experts", "num_experts_per_tok", "intermediate_size")),
        moe_experts(MIXTRAL_8X22B, "mixtral-8x22b-v01_moe_ep4tp8_e2of8_top2_i2048", "fused_moe",
                    "Mixtral-8x22B sparse MoE block on one expert/tensor-parallel rank (MixtralSparseMoeBlock in "
                    "transformers' modeling_mixtral.py): each token's top-2 (num_experts_per_tok) of num_experts 8 "
                    "with renormalised softmax weights (from the router problem); SwiGLU experts of intermediate_size 16384 (TP=8: 2048 here; "
                    "EP=4: experts 0..1); hidden_size 6144. Output: the rank's partial sum before the all-reduce.",
                    kind="softmax", hidden=6144, experts=8, local=2, inter=2048, topk=2,
                    cite=("hidden_size", "intermediate_size", "num_experts", "num_experts_per_tok")),
    ]


def drafts() -> list[ProblemDraft]:
    return _l1_attention() + _l1_rope_and_routing() + _l2()
