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

import math

from suite_recipes.builder import const, problem, tensor, var
from suite_recipes.models import model
from suite_recipes.sweeps import with_gpu_tier
from suite_recipes.snippets import SPLIT_OFFSETS
from suite_recipes.shapes import tokens
from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for

PAGE_SIZE = 16
_PAGE_NOTE = "page_size 16 is a serving choice (the vLLM/SGLang default block size), not a model value"

# --- models --------------------------------------------------------------------------------------
LLAMA_8B = model("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "language",
                 {"num_attention_heads": 32, "num_key_value_heads": 8, "derived.head_dim": 128,
                  "rope_theta": 500000.0, "rope_scaling.factor": 8.0, "rope_scaling.low_freq_factor": 1.0,
                  "rope_scaling.high_freq_factor": 4.0, "rope_scaling.original_max_position_embeddings": 8192,
                  "vocab_size": 128256})
LLAMA_70B = model("Llama-3.1-70B", "meta-llama/Llama-3.1-70B", "language",
                  {"num_attention_heads": 64, "num_key_value_heads": 8, "derived.head_dim": 128,
                   "intermediate_size": 28672, "vocab_size": 128256})
QWEN3_8B = model("Qwen3-8B", "Qwen/Qwen3-8B", "language",
                 {"num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936})
QWEN3_32B = model("Qwen3-32B", "Qwen/Qwen3-32B", "language",
                  {"num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128})
QWEN3_MOE = model("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", "language",
                  {"num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": True, "hidden_size": 2048})
MIXTRAL = model("Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-v0.1", "language",
                {"num_experts": 8, "num_experts_per_tok": 2})
DSV3 = model("DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "language",
             {"num_attention_heads": 128, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
              "rope_scaling.factor": 40, "rope_scaling.mscale_all_dim": 1.0})
DSV3_GATE = model("DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "language",
                  {"num_experts": 256, "num_experts_per_tok": 8, "n_group": 8, "topk_group": 4,
                   "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "topk_method": "noaux_tc",
                   "norm_topk_prob": True})
DSV2_LITE = model("DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V2-Lite", "language",
                  {"num_experts": 64, "num_experts_per_tok": 6, "norm_topk_prob": False, "scoring_func": "softmax",
                   "topk_method": "greedy"})
GPT_OSS_20B = model("gpt-oss-20b", "openai/gpt-oss-20b", "language",
                    {"num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "sliding_window": 128})
GPT_OSS_120B = model("gpt-oss-120b", "openai/gpt-oss-120b", "language",
                     {"num_experts": 128, "num_experts_per_tok": 4, "hidden_size": 2880})
GEMMA2_9B = model("Gemma-2-9B", "google/gemma-2-9b", "language",
                  {"vocab_size": 256000, "final_logit_softcapping": 30.0})
GEMMA3_27B = model("Gemma-3-27B-it (text decoder)", "google/gemma-3-27b-it", "language",
                   {"intermediate_size": 21504})
QWEN25_7B = model("Qwen2.5-7B", "Qwen/Qwen2.5-7B", "language",
                  {"num_key_value_heads": 4, "derived.head_dim": 128})
PHI4 = model("Phi-4 (14B)", "microsoft/phi-4", "language", {"vocab_size": 100352})
MISTRAL_LARGE = model("Mistral-Large-Instruct-2411", "mistralai/Mistral-Large-Instruct-2411", "language",
                      {"hidden_size": 12288, "rms_norm_eps": 1e-05})
QWEN25_VL = model("Qwen2.5-VL-7B-Instruct", "Qwen/Qwen2.5-VL-7B-Instruct", "multimodal",
                  {"text_config.hidden_size": 3584})


def _workloads(keys: tuple[str, ...], rows: list[tuple]) -> list[dict[str, int]]:
    return [dict(zip(keys, row)) for row in rows]


# --- shared generator code (pasted into the references that use it) ------------------------------
_SPLIT = '''

''' + SPLIT_OFFSETS

_PAGE_TABLE = _SPLIT + '''

def _page_table(batch_size, num_kv_indices, num_pages, page_size):
    """Pages per sequence split at random (each >= 1); pages drawn as a random permutation of the pool."""
    kv_indptr = _offsets(_split(num_kv_indices, batch_size))
    kv_indices = torch.randperm(num_pages)[:num_kv_indices].to(torch.int32)
    kv_last_page_len = torch.randint(1, page_size + 1, (batch_size,), dtype=torch.int32)
    return kv_indptr, kv_indices, kv_last_page_len
'''

_BUCKET = '''

def _safe_uniform(cdf, margin=1e-4):
    """A uniform number whose position in the normalised cdf (float64, ascending, last = 1) keeps
    `margin` from every bucket edge, so rounding cannot change which token it selects."""
    cdf = cdf.to(torch.float64)
    lower = torch.cat([torch.zeros(1, dtype=torch.float64), cdf[:-1]])
    width = cdf - lower
    u = float(torch.rand(()))
    i = int(torch.searchsorted(cdf, torch.tensor([u], dtype=torch.float64), right=True).clamp(max=cdf.numel() - 1))
    if width[i] > 0 and u - float(lower[i]) >= margin and float(cdf[i]) - u >= margin:
        return u
    wide = torch.nonzero(width >= 4 * margin).flatten()
    if wide.numel() == 0:
        wide = torch.argmax(width).reshape(1)
    j = int(wide[torch.argmin((wide - i).abs())])
    return float((lower[j] + cdf[j]) / 2)


def _peaked_probs(rows, vocab, device):
    """Softmax of logits with LLM-like spread whose values are all distinct (gaps >= 1e-5)."""
    scale = torch.empty(rows, 1).uniform_(2.5, 5.0)
    logits = torch.sort(torch.randn(rows, vocab), dim=-1).values * scale
    logits = logits + torch.arange(vocab, dtype=torch.float32) * 1e-5
    perm = torch.argsort(torch.rand(rows, vocab), dim=-1)
    logits = torch.gather(logits, 1, perm)
    return torch.softmax(logits.to(torch.float64), dim=-1).to(torch.float32)
'''


# --- paged GQA decode ----------------------------------------------------------------------------
_DECODE = '''import math
import torch


@torch.no_grad()
def run(q, k_cache, v_cache, kv_indptr, kv_indices, kv_last_page_len):
    batch_size, num_qo_heads, head_dim = q.shape
    _, page_size, num_kv_heads, _ = k_cache.shape
    sm_scale = 1.0 / math.sqrt(head_dim)
    group = num_qo_heads // num_kv_heads
    acc = (torch.float64 if q.dtype == torch.float64 else torch.float32)
    output = torch.empty_like(q)
    lse = torch.empty((batch_size, num_qo_heads), dtype=acc, device=q.device)
    for b in range(batch_size):
        start, end = int(kv_indptr[b]), int(kv_indptr[b + 1])
        length = (end - start - 1) * page_size + int(kv_last_page_len[b])
        pages = kv_indices[start:end].long()
        k = k_cache[pages].reshape(-1, num_kv_heads, head_dim)[:length].to(acc)
        v = v_cache[pages].reshape(-1, num_kv_heads, head_dim)[:length].to(acc)
        qb = q[b].to(acc).reshape(num_kv_heads, group, head_dim)
        scores = torch.matmul(qb, k.permute(1, 2, 0)) * sm_scale          # [kv_heads, group, length]
        lse[b] = (torch.logsumexp(scores, dim=-1) / math.log(2.0)).reshape(num_qo_heads)
        probs = torch.softmax(scores, dim=-1).to(q.dtype).to(acc)      # P in the KV dtype, as FlashInfer's PV MMA
        out = torch.matmul(probs, v.permute(1, 0, 2))                      # [kv_heads, group, head_dim]
        output[b] = out.reshape(num_qo_heads, head_dim).to(q.dtype)
    return output, lse
''' + _PAGE_TABLE + '''

def make_inputs(axes, device):
    b, n, p = axes["batch_size"], axes["num_kv_indices"], axes["num_pages"]
    h, hkv, d, ps = axes["num_qo_heads"], axes["num_kv_heads"], axes["head_dim"], axes["page_size"]
    kv_indptr, kv_indices, kv_last_page_len = _page_table(b, n, p, ps)
    return {"q": torch.randn(b, h, d).to(torch.bfloat16).to(device),
            "k_cache": torch.randn(p, ps, hkv, d).to(torch.bfloat16).to(device),
            "v_cache": torch.randn(p, ps, hkv, d).to(torch.bfloat16).to(device),
            "kv_indptr": kv_indptr.to(device), "kv_indices": kv_indices.to(device),
            "kv_last_page_len": kv_last_page_len.to(device)}
'''

_PAGED_AXES_DESC = {
    "batch_size": "Sequences in the decode batch (one query token each)",
    "num_pages": "Pages in the KV-cache pool (more than the batch uses)",
    "num_kv_indices": "Pages the batch's sequences use (kv_indptr[-1])",
}


def _paged_inputs(hkv: str = "num_kv_heads", d: str = "head_dim") -> dict:
    return {
        "k_cache": tensor(["num_pages", "page_size", hkv, d], "bfloat16", "Paged K cache (NHD layout per page)"),
        "v_cache": tensor(["num_pages", "page_size", hkv, d], "bfloat16", "Paged V cache"),
        "kv_indptr": tensor(["len_indptr"], "int32", "Offsets of each sequence's pages in kv_indices"),
        "kv_indices": tensor(["num_kv_indices"], "int32", "Page ids, each < num_pages, no page used twice"),
        "kv_last_page_len": tensor(["batch_size"], "int32", "Tokens in each sequence's last page, in [1, page_size]"),
    }


def paged_decode(m, name: str, heads: str, kv_heads: str, dim: str, rows: list[tuple]) -> ProblemDraft:
    h, hkv, d = m.config[heads], m.config[kv_heads], m.config[dim]
    return problem(
        set="FIB", name=name, op_type="attention_decode", model=m,
        description=(f"{m.name} batched GQA decode over a paged KV cache (FlashInfer BatchDecodeWithPagedKVCache): "
                     f"{h} query heads ({heads}), {hkv} KV heads ({kv_heads}), head_dim {d} ({dim}); {_PAGE_NOTE}. "
                     "Each sequence's length is (pages - 1) * page_size + kv_last_page_len; pages come from a "
                     "shuffled pool. Returns the output and the base-2 log-sum-exp of the scaled logits."),
        axes={"batch_size": var(_PAGED_AXES_DESC["batch_size"]),
              "num_qo_heads": const(h, heads), "num_kv_heads": const(hkv, kv_heads), "head_dim": const(d, dim),
              "page_size": const(PAGE_SIZE, "tokens per KV page (serving choice)"),
              "num_pages": var(_PAGED_AXES_DESC["num_pages"]),
              "len_indptr": {"type": "expr", "expression": "batch_size + 1", "description": "batch_size + 1"},
              "num_kv_indices": var(_PAGED_AXES_DESC["num_kv_indices"])},
        inputs={"q": tensor(["batch_size", "num_qo_heads", "head_dim"], "bfloat16"), **_paged_inputs()},
        outputs={"output": tensor(["batch_size", "num_qo_heads", "head_dim"], "bfloat16"),
                 "lse": tensor(["batch_size", "num_qo_heads"], "float32", "log2-sum-exp of the scaled logits")},
        reference=_DECODE, workloads=_workloads(("batch_size", "num_kv_indices", "num_pages"), rows),
        custom_inputs_entrypoint="make_inputs",
        constraints=["num_kv_indices == kv_indptr[-1].item()", "num_pages >= num_kv_indices"])


# --- prefill: ragged KV and paged KV with a cached prefix ----------------------------------------
_ATTEND = '''

def _attend(q, k, v, acc):
    """Causal attention of q [lq, H, D] over k, v [lk, Hkv, D], aligned bottom-right (query i sits at
    position lk - lq + i), heads grouped over the KV heads."""
    lq, num_qo_heads, head_dim = q.shape
    lk, num_kv_heads, _ = k.shape
    group = num_qo_heads // num_kv_heads
    sm_scale = 1.0 / math.sqrt(head_dim)
    qh = q.to(acc).reshape(lq, num_kv_heads, group, head_dim).permute(1, 2, 0, 3)  # [Hkv, G, lq, D]
    kh = k.to(acc).permute(1, 2, 0).unsqueeze(1)                                   # [Hkv, 1, D, lk]
    vh = v.to(acc).permute(1, 0, 2).unsqueeze(1)                                   # [Hkv, 1, lk, D]
    scores = torch.matmul(qh, kh) * sm_scale
    future = torch.ones(lq, lk, dtype=torch.bool, device=q.device).triu(lk - lq + 1)
    scores = scores.masked_fill(future, float("-inf"))
    probs = torch.softmax(scores, dim=-1).to(v.dtype).to(acc)                       # P in the KV dtype for PV
    out = torch.matmul(probs, vh)                                                   # [Hkv, G, lq, D]
    return out.permute(2, 0, 1, 3).reshape(lq, num_qo_heads, head_dim)
'''

_RAGGED_PREFILL = '''import math
import torch
''' + _ATTEND + '''

@torch.no_grad()
def run(q, k, v, qo_indptr, kv_indptr):
    acc = (torch.float64 if q.dtype == torch.float64 else torch.float32)
    output = torch.empty_like(q)
    for b in range(qo_indptr.shape[0] - 1):
        qs, qe = int(qo_indptr[b]), int(qo_indptr[b + 1])
        ks, ke = int(kv_indptr[b]), int(kv_indptr[b + 1])
        output[qs:qe] = _attend(q[qs:qe], k[ks:ke], v[ks:ke], acc).to(q.dtype)
    return output
''' + _SPLIT + '''

def make_inputs(axes, device):
    b, tq, tk = axes["batch_size"], axes["total_q"], axes["total_kv"]
    h, hkv, d = axes["num_qo_heads"], axes["num_kv_heads"], axes["head_dim"]
    q_lens = _split(tq, b)
    kv_lens = q_lens + _split(tk - tq, b, 0)   # a cached prefix of random length before each chunk
    return {"q": torch.randn(tq, h, d).to(torch.bfloat16).to(device),
            "k": torch.randn(tk, hkv, d).to(torch.bfloat16).to(device),
            "v": torch.randn(tk, hkv, d).to(torch.bfloat16).to(device),
            "qo_indptr": _offsets(q_lens).to(device), "kv_indptr": _offsets(kv_lens).to(device)}
'''


def ragged_prefill(m, name: str, heads: str, kv_heads: str, dim: str, rows: list[tuple]) -> ProblemDraft:
    h, hkv, d = m.config[heads], m.config[kv_heads], m.config[dim]
    return problem(
        set="FIB", name=name, op_type="attention_prefill", model=m,
        description=(f"{m.name} batched causal prefill over packed (ragged) Q and K/V "
                     f"(FlashInfer BatchPrefillWithRaggedKVCache): {h} query heads ({heads}), {hkv} KV heads "
                     f"({kv_heads}), head_dim {d} ({dim}). Sequence b owns rows qo_indptr[b]:qo_indptr[b+1] of q and "
                     "kv_indptr[b]:kv_indptr[b+1] of k/v; its KV may be longer than its query chunk (a prefix "
                     "computed earlier), so the causal mask is aligned bottom-right."),
        axes={"batch_size": var("Sequences in the batch"), "total_q": var("Query tokens, all sequences"),
              "total_kv": var("Key/value tokens, all sequences (>= total_q)"),
              "num_qo_heads": const(h, heads), "num_kv_heads": const(hkv, kv_heads), "head_dim": const(d, dim),
              "len_indptr": {"type": "expr", "expression": "batch_size + 1", "description": "batch_size + 1"}},
        inputs={"q": tensor(["total_q", "num_qo_heads", "head_dim"], "bfloat16"),
                "k": tensor(["total_kv", "num_kv_heads", "head_dim"], "bfloat16"),
                "v": tensor(["total_kv", "num_kv_heads", "head_dim"], "bfloat16"),
                "qo_indptr": tensor(["len_indptr"], "int32", "Query offsets per sequence"),
                "kv_indptr": tensor(["len_indptr"], "int32", "Key/value offsets per sequence; each KV length >= its query length")},
        outputs={"output": tensor(["total_q", "num_qo_heads", "head_dim"], "bfloat16")},
        reference=_RAGGED_PREFILL, workloads=_workloads(("batch_size", "total_q", "total_kv"), rows),
        custom_inputs_entrypoint="make_inputs",
        constraints=["total_q == qo_indptr[-1].item()", "total_kv == kv_indptr[-1].item()"])


_PAGE_TABLE_FOR = _SPLIT + '''

def _page_table_for(min_lengths, num_kv_indices, num_pages, page_size):
    """A page table whose sequence b holds at least min_lengths[b] tokens, using num_kv_indices pages."""
    batch_size = min_lengths.numel()
    needed = (min_lengths + page_size - 1) // page_size
    pages = needed + _split(num_kv_indices - int(needed.sum()), batch_size, 0)
    low = torch.clamp(min_lengths - (pages - 1) * page_size, min=1)
    last = low + (torch.rand(batch_size) * (page_size - low + 1)).long()
    kv_indices = torch.randperm(num_pages)[:num_kv_indices].to(torch.int32)
    return _offsets(pages), kv_indices, last.to(torch.int32)
'''

_PAGED_PREFILL = '''import math
import torch
''' + _ATTEND + '''

@torch.no_grad()
def run(q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, kv_last_page_len):
    _, page_size, num_kv_heads, head_dim = k_cache.shape
    acc = (torch.float64 if q.dtype == torch.float64 else torch.float32)
    output = torch.empty_like(q)
    for b in range(qo_indptr.shape[0] - 1):
        qs, qe = int(qo_indptr[b]), int(qo_indptr[b + 1])
        start, end = int(kv_indptr[b]), int(kv_indptr[b + 1])
        length = (end - start - 1) * page_size + int(kv_last_page_len[b])
        pages = kv_indices[start:end].long()
        k = k_cache[pages].reshape(-1, num_kv_heads, head_dim)[:length]
        v = v_cache[pages].reshape(-1, num_kv_heads, head_dim)[:length]
        output[qs:qe] = _attend(q[qs:qe], k, v, acc).to(q.dtype)
    return output
''' + _PAGE_TABLE_FOR + '''

def make_inputs(axes, device):
    b, tq, n, p = axes["batch_size"], axes["total_q"], axes["num_kv_indices"], axes["num_pages"]
    h, hkv, d, ps = axes["num_qo_heads"], axes["num_kv_heads"], axes["head_dim"], axes["page_size"]
    q_lens = _split(tq, b)
    kv_indptr, kv_indices, kv_last_page_len = _page_table_for(q_lens, n, p, ps)
    return {"q": torch.randn(tq, h, d).to(torch.bfloat16).to(device),
            "k_cache": torch.randn(p, ps, hkv, d).to(torch.bfloat16).to(device),
            "v_cache": torch.randn(p, ps, hkv, d).to(torch.bfloat16).to(device),
            "qo_indptr": _offsets(q_lens).to(device), "kv_indptr": kv_indptr.to(device),
            "kv_indices": kv_indices.to(device), "kv_last_page_len": kv_last_page_len.to(device)}
'''


def paged_prefill(m, name: str, heads: str, kv_heads: str, dim: str, rows: list[tuple]) -> ProblemDraft:
    h, hkv, d = m.config[heads], m.config[kv_heads], m.config[dim]
    return problem(
        set="FIB", name=name, op_type="attention_prefill", model=m,
        description=(f"{m.name} batched causal prefill of new query chunks against a paged KV cache that already "
                     "holds each sequence's cached prefix plus the chunk's own K/V (FlashInfer "
                     f"BatchPrefillWithPagedKVCache, prefix caching / chunked prefill): {h} query heads ({heads}), "
                     f"{hkv} KV heads ({kv_heads}), head_dim {d} ({dim}); {_PAGE_NOTE}. The causal mask is aligned "
                     "bottom-right: the chunk's last query sees the whole sequence."),
        axes={"batch_size": var("Sequences in the batch"), "total_q": var("New query tokens, all sequences"),
              "num_qo_heads": const(h, heads), "num_kv_heads": const(hkv, kv_heads), "head_dim": const(d, dim),
              "page_size": const(PAGE_SIZE, "tokens per KV page (serving choice)"),
              "num_pages": var(_PAGED_AXES_DESC["num_pages"]),
              "len_indptr": {"type": "expr", "expression": "batch_size + 1", "description": "batch_size + 1"},
              "num_kv_indices": var(_PAGED_AXES_DESC["num_kv_indices"])},
        inputs={"q": tensor(["total_q", "num_qo_heads", "head_dim"], "bfloat16"),
                "k_cache": _paged_inputs()["k_cache"], "v_cache": _paged_inputs()["v_cache"],
                "qo_indptr": tensor(["len_indptr"], "int32", "Query offsets per sequence"),
                **{k: v for k, v in _paged_inputs().items() if k not in ("k_cache", "v_cache")}},
        outputs={"output": tensor(["total_q", "num_qo_heads", "head_dim"], "bfloat16")},
        reference=_PAGED_PREFILL,
        workloads=_workloads(("batch_size", "total_q", "num_kv_indices", "num_pages"), rows),
        custom_inputs_entrypoint="make_inputs",
        constraints=["total_q == qo_indptr[-1].item()", "num_kv_indices == kv_indptr[-1].item()",
                     "num_pages >= num_kv_indices"])


# --- MLA paged decode (DeepSeek, absorbed form) ---------------------------------------------------
_MLA_DECODE = '''import math
import torch

SM_SCALE = __SM_SCALE__  # mscale^2 / sqrt(qk_nope_head_dim + qk_rope_head_dim)


@torch.no_grad()
def run(q_nope, q_pe, ckv_cache, kpe_cache, kv_indptr, kv_indices, kv_last_page_len):
    batch_size, num_heads, kv_lora_rank = q_nope.shape
    page_size, rope_dim = kpe_cache.shape[1], kpe_cache.shape[2]
    acc = (torch.float64 if q_nope.dtype == torch.float64 else torch.float32)
    output = torch.empty_like(q_nope)
    lse = torch.empty((batch_size, num_heads), dtype=acc, device=q_nope.device)
    for b in range(batch_size):
        start, end = int(kv_indptr[b]), int(kv_indptr[b + 1])
        length = (end - start - 1) * page_size + int(kv_last_page_len[b])
        pages = kv_indices[start:end].long()
        ckv = ckv_cache[pages].reshape(-1, kv_lora_rank)[:length].to(acc)   # latent K and V  [L, 512]
        kpe = kpe_cache[pages].reshape(-1, rope_dim)[:length].to(acc)       # rotary key part [L, 64]
        scores = (torch.matmul(q_nope[b].to(acc), ckv.t()) + torch.matmul(q_pe[b].to(acc), kpe.t())) * SM_SCALE
        lse[b] = torch.logsumexp(scores, dim=-1) / math.log(2.0)
        probs = torch.softmax(scores, dim=-1).to(q_nope.dtype).to(acc)    # P in the cache dtype for PV
        output[b] = torch.matmul(probs, ckv).to(q_nope.dtype)
    return output, lse
''' + _PAGE_TABLE + '''

def make_inputs(axes, device):
    b, n, p = axes["batch_size"], axes["num_kv_indices"], axes["num_pages"]
    h, r, e, ps = axes["num_heads"], axes["kv_lora_rank"], axes["qk_rope_head_dim"], axes["page_size"]
    kv_indptr, kv_indices, kv_last_page_len = _page_table(b, n, p, ps)
    return {"q_nope": torch.randn(b, h, r).to(torch.bfloat16).to(device),
            "q_pe": torch.randn(b, h, e).to(torch.bfloat16).to(device),
            "ckv_cache": torch.randn(p, ps, r).to(torch.bfloat16).to(device),
            "kpe_cache": torch.randn(p, ps, e).to(torch.bfloat16).to(device),
            "kv_indptr": kv_indptr.to(device), "kv_indices": kv_indices.to(device),
            "kv_last_page_len": kv_last_page_len.to(device)}
'''


def mla_decode(m, rows: list[tuple]) -> ProblemDraft:
    h, r, e, nope = (m.config[k] for k in ("num_attention_heads", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim"))
    factor, mscale_all = m.config["rope_scaling.factor"], m.config["rope_scaling.mscale_all_dim"]
    mscale = 0.1 * mscale_all * math.log(factor) + 1.0
    scale = mscale * mscale / math.sqrt(nope + e)
    return problem(
        set="FIB", name=f"deepseek-v3_mla_paged_decode_h{h}_ckv{r}_kpe{e}_ps{PAGE_SIZE}", op_type="attention_mla",
        model=m,
        description=(f"{m.name} multi-head latent attention decode in the absorbed form (FlashInfer "
                     f"BatchMLAPagedAttentionWrapper): {h} heads (num_attention_heads, data-parallel attention), the "
                     f"compressed KV latent of kv_lora_rank {r} serves as both K and V, plus a shared rotary key of "
                     f"qk_rope_head_dim {e}; q_nope is already multiplied by W_UK. sm_scale = mscale^2 / "
                     f"sqrt(qk_nope_head_dim + qk_rope_head_dim) with the YaRN mscale = 0.1 * mscale_all_dim * "
                     f"ln(rope_scaling.factor) + 1. {_PAGE_NOTE}. Returns the latent output and base-2 LSE."),
        axes={"batch_size": var(_PAGED_AXES_DESC["batch_size"]), "num_heads": const(h, "num_attention_heads"),
              "kv_lora_rank": const(r, "kv_lora_rank"), "qk_rope_head_dim": const(e, "qk_rope_head_dim"),
              "page_size": const(PAGE_SIZE, "tokens per KV page (serving choice)"),
              "num_pages": var(_PAGED_AXES_DESC["num_pages"]),
              "len_indptr": {"type": "expr", "expression": "batch_size + 1", "description": "batch_size + 1"},
              "num_kv_indices": var(_PAGED_AXES_DESC["num_kv_indices"])},
        inputs={"q_nope": tensor(["batch_size", "num_heads", "kv_lora_rank"], "bfloat16", "Absorbed query (q_nope @ W_UK)"),
                "q_pe": tensor(["batch_size", "num_heads", "qk_rope_head_dim"], "bfloat16", "Rotary part of the query"),
                "ckv_cache": tensor(["num_pages", "page_size", "kv_lora_rank"], "bfloat16", "Paged compressed KV latent"),
                "kpe_cache": tensor(["num_pages", "page_size", "qk_rope_head_dim"], "bfloat16", "Paged rotary key"),
                **{k: v for k, v in _paged_inputs().items() if k not in ("k_cache", "v_cache")}},
        outputs={"output": tensor(["batch_size", "num_heads", "kv_lora_rank"], "bfloat16"),
                 "lse": tensor(["batch_size", "num_heads"], "float32", "log2-sum-exp of the scaled logits")},
        reference=_MLA_DECODE.replace("__SM_SCALE__", repr(scale)), workloads=_workloads(("batch_size", "num_kv_indices", "num_pages"), rows),
        custom_inputs_entrypoint="make_inputs",
        constraints=["num_kv_indices == kv_indptr[-1].item()", "num_pages >= num_kv_indices"])


# --- sliding-window decode with attention sinks (gpt-oss) -----------------------------------------
_SWA_SINK_DECODE = '''import math
import torch

WINDOW_SIZE = __WINDOW__  # sliding_window: keys visible to a query, itself included


@torch.no_grad()
def run(q, k_cache, v_cache, kv_indptr, kv_indices, kv_last_page_len, sinks):
    batch_size, num_qo_heads, head_dim = q.shape
    sm_scale = 1.0 / math.sqrt(head_dim)
    _, page_size, num_kv_heads, _ = k_cache.shape
    group = num_qo_heads // num_kv_heads
    acc = (torch.float64 if q.dtype == torch.float64 else torch.float32)
    sink = sinks.to(acc).reshape(num_kv_heads, group, 1)
    output = torch.empty_like(q)
    for b in range(batch_size):
        start, end = int(kv_indptr[b]), int(kv_indptr[b + 1])
        length = (end - start - 1) * page_size + int(kv_last_page_len[b])
        first = max(length - WINDOW_SIZE, 0)             # the query (position length-1) sees the last WINDOW_SIZE keys
        first_page = first // page_size
        pages = kv_indices[start + first_page:end].long()
        lo, hi = first - first_page * page_size, length - first_page * page_size
        k = k_cache[pages].reshape(-1, num_kv_heads, head_dim)[lo:hi].to(acc)
        v = v_cache[pages].reshape(-1, num_kv_heads, head_dim)[lo:hi].to(acc)
        qb = q[b].to(acc).reshape(num_kv_heads, group, head_dim)
        scores = torch.matmul(qb, k.permute(1, 2, 0)) * sm_scale                    # [Hkv, G, W]
        probs = torch.softmax(torch.cat([scores, sink.expand(-1, -1, 1)], dim=-1), dim=-1)[..., :-1]
        probs = probs.to(q.dtype).to(acc)                                            # P in the KV dtype for PV
        output[b] = torch.matmul(probs, v.permute(1, 0, 2)).reshape(num_qo_heads, head_dim).to(q.dtype)
    return output
''' + _PAGE_TABLE + '''

def make_inputs(axes, device):
    b, n, p = axes["batch_size"], axes["num_kv_indices"], axes["num_pages"]
    h, hkv, d, ps = axes["num_qo_heads"], axes["num_kv_heads"], axes["head_dim"], axes["page_size"]
    kv_indptr, kv_indices, kv_last_page_len = _page_table(b, n, p, ps)
    return {"q": torch.randn(b, h, d).to(torch.bfloat16).to(device),
            "k_cache": torch.randn(p, ps, hkv, d).to(torch.bfloat16).to(device),
            "v_cache": torch.randn(p, ps, hkv, d).to(torch.bfloat16).to(device),
            "kv_indptr": kv_indptr.to(device), "kv_indices": kv_indices.to(device),
            "kv_last_page_len": kv_last_page_len.to(device),
            "sinks": (torch.randn(h) + 1.0).to(device)}
'''


def swa_sink_decode(m, rows: list[tuple]) -> ProblemDraft:
    h, hkv, d, w = (m.config[k] for k in ("num_attention_heads", "num_key_value_heads", "head_dim", "sliding_window"))
    return problem(
        set="FIB", name=f"gpt-oss-20b_swa_sink_paged_decode_h{h}_kv{hkv}_d{d}_w{w}", op_type="attention_decode",
        model=m,
        description=(f"{m.name} decode for its sliding-attention layers over a paged KV cache: {h} query heads "
                     f"(num_attention_heads), {hkv} KV heads (num_key_value_heads), head_dim {d}; each query sees "
                     f"only the last sliding_window={w} keys of its sequence, and a learned per-head sink logit "
                     "joins the softmax denominator (attention sinks) without contributing a value. Sequences are "
                     f"longer than the window, so most of each sequence's pages are not read. {_PAGE_NOTE}."),
        axes={"batch_size": var(_PAGED_AXES_DESC["batch_size"]),
              "num_qo_heads": const(h, "num_attention_heads"), "num_kv_heads": const(hkv, "num_key_value_heads"),
              "head_dim": const(d, "head_dim"), "page_size": const(PAGE_SIZE, "tokens per KV page (serving choice)"),
              "num_pages": var(_PAGED_AXES_DESC["num_pages"]),
              "len_indptr": {"type": "expr", "expression": "batch_size + 1", "description": "batch_size + 1"},
              "num_kv_indices": var(_PAGED_AXES_DESC["num_kv_indices"])},
        inputs={"q": tensor(["batch_size", "num_qo_heads", "head_dim"], "bfloat16"), **_paged_inputs(),
                "sinks": tensor(["num_qo_heads"], "float32", "Learned sink logit per query head")},
        outputs={"output": tensor(["batch_size", "num_qo_heads", "head_dim"], "bfloat16")},
        reference=_SWA_SINK_DECODE.replace("__WINDOW__", str(w)), workloads=_workloads(("batch_size", "num_kv_indices", "num_pages"), rows),
        custom_inputs_entrypoint="make_inputs",
        constraints=["num_kv_indices == kv_indptr[-1].item()", "num_pages >= num_kv_indices"])


# --- attention-state merge (cascade / split-KV attention) -----------------------------------------
_MERGE = '''import torch


@torch.no_grad()
def run(v_a, s_a, v_b, s_b):
    acc = (torch.float64 if v_a.dtype == torch.float64 else torch.float32)
    sa, sb = s_a.to(acc), s_b.to(acc)
    m = torch.maximum(sa, sb)
    wa, wb = torch.exp2(sa - m), torch.exp2(sb - m)
    total = wa + wb
    v = v_a.to(acc) * (wa / total).unsqueeze(-1) + v_b.to(acc) * (wb / total).unsqueeze(-1)
    return v.to(v_a.dtype), m + torch.log2(total)
'''


def merge_states(m, name: str, rows: list[int]) -> ProblemDraft:
    h, d = m.config["num_attention_heads"], m.config["head_dim"]
    return problem(
        set="FIB", name=name, op_type="attention_merge", model=m,
        description=(f"{m.name} merge of two partial attention results over disjoint key sets (FlashInfer "
                     "merge_state, used by cascade attention for a shared prefix and by split-KV decode): each "
                     "state is an output v and its base-2 log-sum-exp s; the merged output is the "
                     f"2^s-weighted mean and s = log2(2^s_a + 2^s_b). {h} heads (num_attention_heads), head_dim {d}."),
        axes={"num_tokens": var("Query tokens"), "num_heads": const(h, "num_attention_heads"),
              "head_dim": const(d, "head_dim")},
        inputs={"v_a": tensor(["num_tokens", "num_heads", "head_dim"], "bfloat16", "Output over the first key set"),
                "s_a": tensor(["num_tokens", "num_heads"], "float32", "Its log2-sum-exp"),
                "v_b": tensor(["num_tokens", "num_heads", "head_dim"], "bfloat16", "Output over the second key set"),
                "s_b": tensor(["num_tokens", "num_heads"], "float32", "Its log2-sum-exp")},
        outputs={"v": tensor(["num_tokens", "num_heads", "head_dim"], "bfloat16"),
                 "s": tensor(["num_tokens", "num_heads"], "float32")},
        reference=_MERGE, workloads=[{"num_tokens": t} for t in rows])


# --- KV-cache append ------------------------------------------------------------------------------
_APPEND = '''import torch

PAGE_SIZE = @PAGE_SIZE@  # tokens per KV page


@torch.no_grad()
def run(append_key, append_value, batch_indices, positions, kv_indices, kv_indptr):
    """The slots this append writes: token i lands in page kv_indices[kv_indptr[batch_indices[i]] + positions[i]
    // PAGE_SIZE] at slot positions[i] % PAGE_SIZE, i.e. row slot_indices[i] of the cache viewed as
    [num_pages * PAGE_SIZE, num_kv_heads, head_dim]; the rows written there are the token's K and V.
    `k_cache.view(-1, H, D)[slot_indices] = k_rows` (and the same for V) is the whole-cache result."""
    pos = positions.long()
    page = kv_indices[kv_indptr[batch_indices.long()].long() + torch.div(pos, PAGE_SIZE, rounding_mode="floor")]
    slot_indices = page.long() * PAGE_SIZE + torch.remainder(pos, PAGE_SIZE)
    return slot_indices, append_key.clone(), append_value.clone()
''' + _PAGE_TABLE_FOR + '''

def make_inputs(axes, device):
    b, nnz, n, p = axes["batch_size"], axes["nnz"], axes["num_kv_indices"], axes["num_pages"]
    hkv, d, ps = axes["num_kv_heads"], axes["head_dim"], axes["page_size"]
    append_lens = _split(nnz, b)
    kv_indptr, kv_indices, last = _page_table_for(append_lens, n, p, ps)
    seq_lens = (kv_indptr[1:] - kv_indptr[:-1] - 1).long() * ps + last.long()
    batch_indices = torch.repeat_interleave(torch.arange(b), append_lens)
    starts = torch.repeat_interleave(seq_lens - append_lens, append_lens)
    within = torch.arange(nnz) - torch.repeat_interleave(_offsets(append_lens)[:-1].long(), append_lens)
    return {"append_key": torch.randn(nnz, hkv, d).to(torch.bfloat16).to(device),
            "append_value": torch.randn(nnz, hkv, d).to(torch.bfloat16).to(device),
            "batch_indices": batch_indices.to(torch.int32).to(device),
            "positions": (starts + within).to(torch.int32).to(device),
            "kv_indices": kv_indices.to(device), "kv_indptr": kv_indptr.to(device)}
'''


def append_kv(m, rows: list[tuple]) -> ProblemDraft:
    hkv, d = m.config["num_key_value_heads"], m.config["derived.head_dim"]
    return problem(
        set="FIB", name=f"qwen2.5-7b_append_paged_kv_cache_kv{hkv}_d{d}_ps{PAGE_SIZE}", op_type="kv_cache",
        model=m,
        description=(f"{m.name} append of new tokens' K/V into a paged KV cache (FlashInfer append_paged_kv_cache): "
                     f"{hkv} KV heads (num_key_value_heads), head_dim {d}; token i goes to page "
                     "kv_indices[kv_indptr[batch_indices[i]] + positions[i] // page_size], slot positions[i] % "
                     "page_size. The page table already covers the new tokens (each sequence's last tokens). The "
                     "outputs are the written slots only: slot_indices[i] = page * page_size + slot (the row of the "
                     "cache viewed as [num_pages * page_size, heads, head_dim]) and the K/V rows written there, in "
                     "token order; the cache's other rows are untouched by an append, so returning the whole cache "
                     f"would time a copy hundreds of times the append. {_PAGE_NOTE}."),
        axes={"nnz": var("New tokens, all sequences"), "batch_size": var("Sequences"),
              "num_kv_heads": const(hkv, "num_key_value_heads"), "head_dim": const(d, "derived.head_dim"),
              "page_size": const(PAGE_SIZE, "tokens per KV page (serving choice)"),
              "num_pages": var(_PAGED_AXES_DESC["num_pages"]),
              "len_indptr": {"type": "expr", "expression": "batch_size + 1", "description": "batch_size + 1"},
              "num_kv_indices": var(_PAGED_AXES_DESC["num_kv_indices"])},
        inputs={"append_key": tensor(["nnz", "num_kv_heads", "head_dim"], "bfloat16"),
                "append_value": tensor(["nnz", "num_kv_heads", "head_dim"], "bfloat16"),
                "batch_indices": tensor(["nnz"], "int32", "Sequence of each new token, < batch_size"),
                "positions": tensor(["nnz"], "int32", "Position of each new token within its sequence"),
                "kv_indices": _paged_inputs()["kv_indices"], "kv_indptr": _paged_inputs()["kv_indptr"]},
        outputs={"slot_indices": tensor(["nnz"], "int64", "Cache row written by each new token: page * page_size + slot"),
                 "k_rows": tensor(["nnz", "num_kv_heads", "head_dim"], "bfloat16", "K written at slot_indices"),
                 "v_rows": tensor(["nnz", "num_kv_heads", "head_dim"], "bfloat16", "V written at slot_indices")},
        reference=_APPEND.replace("@PAGE_SIZE@", str(PAGE_SIZE)), workloads=_workloads(("batch_size", "nnz", "num_kv_indices", "num_pages"), rows),
        custom_inputs_entrypoint="make_inputs",
        constraints=["num_kv_indices == kv_indptr[-1].item()", "num_pages >= num_kv_indices"],
        tolerance=tolerance_for("int32"))


# --- RoPE at ragged positions with Llama-3.1 frequency scaling -------------------------------------
_ROPE_LLAMA3 = '''import math
import torch

ROPE_THETA = {theta!r}
FACTOR = {factor!r}
LOW_FREQ_FACTOR = {low!r}
HIGH_FREQ_FACTOR = {high!r}
OLD_CONTEXT = {old!r}


def _inv_freq(head_dim):
    """Llama-3.1 rope scaling: long wavelengths divided by FACTOR, short ones kept, a smooth ramp between."""
    low_wavelen, high_wavelen = OLD_CONTEXT / LOW_FREQ_FACTOR, OLD_CONTEXT / HIGH_FREQ_FACTOR
    out = []
    for i in range(head_dim // 2):
        freq = 1.0 / ROPE_THETA ** (2 * i / head_dim)
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            out.append(freq)
        elif wavelen > low_wavelen:
            out.append(freq / FACTOR)
        else:
            smooth = (OLD_CONTEXT / wavelen - LOW_FREQ_FACTOR) / (HIGH_FREQ_FACTOR - LOW_FREQ_FACTOR)
            out.append((1 - smooth) * freq / FACTOR + smooth * freq)
    return out


@torch.no_grad()
def run(q, k, pos_ids):
    head_dim = q.shape[-1]
    half = head_dim // 2
    acc = (torch.float64 if q.dtype == torch.float64 else torch.float32)
    inv_freq = torch.tensor(_inv_freq(head_dim), dtype=acc, device=q.device)
    angles = pos_ids.to(acc).unsqueeze(-1) * inv_freq              # [nnz, head_dim / 2]
    cos = torch.cat([torch.cos(angles), torch.cos(angles)], dim=-1).unsqueeze(1)
    sin = torch.cat([torch.sin(angles), torch.sin(angles)], dim=-1).unsqueeze(1)

    def rotate(x):
        x = x.to(acc)
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return (x * cos + rotated * sin).to(q.dtype)

    return rotate(q), rotate(k)
'''

_ROPE_INPUTS = _SPLIT + '''

def make_inputs(axes, device):
    nnz, h, hkv, d = axes["nnz"], axes["num_qo_heads"], axes["num_kv_heads"], axes["head_dim"]
    sequences = int(torch.randint(1, min(nnz, 16) + 1, ()))
    lens = _split(nnz, sequences)
    starts = torch.randint(0, 32768 - nnz, (sequences,))  # already-cached prefix of each sequence
    pos = torch.repeat_interleave(starts - _offsets(lens)[:-1].long(), lens) + torch.arange(nnz)
    return {"q": torch.randn(nnz, h, d).to(torch.bfloat16).to(device),
            "k": torch.randn(nnz, hkv, d).to(torch.bfloat16).to(device),
            "pos_ids": pos.to(torch.int32).to(device)}
'''


def rope_llama3(m, rows: list[int]) -> ProblemDraft:
    c = m.config
    h, hkv, d = c["num_attention_heads"], c["num_key_value_heads"], c["derived.head_dim"]
    reference = _ROPE_LLAMA3.format(theta=c["rope_theta"], factor=c["rope_scaling.factor"],
                                    low=c["rope_scaling.low_freq_factor"], high=c["rope_scaling.high_freq_factor"],
                                    old=c["rope_scaling.original_max_position_embeddings"]) + _ROPE_INPUTS
    return problem(
        set="FIB", name=f"llama-3.1-8b_rope_llama31_pos_ids_h{h}_kv{hkv}_d{d}", op_type="rope", model=m,
        description=(f"{m.name} rotary embedding of packed q and k at arbitrary per-token positions (FlashInfer "
                     f"apply_llama31_rope_pos_ids, non-interleaved halves): {h} query heads, {hkv} KV heads, head_dim "
                     f"{d}; inverse frequencies from rope_theta {c['rope_theta']} with the llama3 rope_scaling (factor "
                     f"{c['rope_scaling.factor']}, low/high_freq_factor {c['rope_scaling.low_freq_factor']}/"
                     f"{c['rope_scaling.high_freq_factor']}, original_max_position_embeddings "
                     f"{c['rope_scaling.original_max_position_embeddings']}). Positions come from a batch of "
                     "sequence chunks at random offsets below 32768; cos/sin are computed in fp32."),
        axes={"nnz": var("Tokens, all sequences"), "num_qo_heads": const(h, "num_attention_heads"),
              "num_kv_heads": const(hkv, "num_key_value_heads"), "head_dim": const(d, "derived.head_dim")},
        inputs={"q": tensor(["nnz", "num_qo_heads", "head_dim"], "bfloat16"),
                "k": tensor(["nnz", "num_kv_heads", "head_dim"], "bfloat16"),
                "pos_ids": tensor(["nnz"], "int32", "Position of each token in its sequence")},
        outputs={"q_rope": tensor(["nnz", "num_qo_heads", "head_dim"], "bfloat16"),
                 "k_rope": tensor(["nnz", "num_kv_heads", "head_dim"], "bfloat16")},
        reference=reference, workloads=[{"nnz": t} for t in rows], custom_inputs_entrypoint="make_inputs")


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


_GROUPED_TOPK = '''import torch

N_GROUP = {n_group}
TOPK_GROUP = {topk_group}
TOP_K = {top_k}
ROUTED_SCALING_FACTOR = {scale!r}


@torch.no_grad()
def run(gating_output, e_score_correction_bias):
    acc = (torch.float64 if gating_output.dtype == torch.float64 else torch.float32)
    num_tokens, num_experts = gating_output.shape
    scores = torch.sigmoid(gating_output.to(acc))
    choice = scores + e_score_correction_bias.to(acc)                 # bias steers selection only
    group_scores = choice.view(num_tokens, N_GROUP, -1).topk(2, dim=-1).values.sum(dim=-1)
    group_idx = group_scores.topk(TOPK_GROUP, dim=-1).indices
    group_mask = torch.zeros_like(group_scores).scatter(1, group_idx, 1.0)
    expert_mask = group_mask.unsqueeze(-1).expand(num_tokens, N_GROUP, num_experts // N_GROUP).reshape(num_tokens, -1)
    masked = choice.masked_fill(expert_mask == 0, float("-inf"))
    ids = torch.topk(masked, TOP_K, dim=-1).indices                    # sorted by biased score
    weights = scores.gather(1, ids)
    weights = weights / weights.sum(dim=-1, keepdim=True) * ROUTED_SCALING_FACTOR
    return weights, ids.to(torch.int32)


def _sidon(n):
    """Erdos-Turan: 2pk + (k^2 mod p) for a prime p >= n; all pairwise sums are distinct."""
    p = n
    while any(p % f == 0 for f in range(2, int(p ** 0.5) + 1)):
        p += 1
    return [2 * p * k + (k * k) % p for k in range(n)]


def make_inputs(axes, device):
    t, e = axes["num_tokens"], axes["num_experts"]
    # Biased scores are a shuffled Sidon set scaled into [0.25, 0.75]: expert scores and every group's
    # top-2 sum are distinct by >= 3.8e-6 (rounding moves them by ~1e-7), so no selection can tie.
    sidon = torch.tensor(_sidon(e), dtype=torch.float64)
    target = 0.25 + 0.5 * sidon / sidon.max()
    choice = target[torch.argsort(torch.rand(t, e), dim=-1)]
    bias = ((torch.rand(e, dtype=torch.float64) - 0.5) * 0.4).to(torch.float32)
    sig = choice - bias.to(torch.float64)
    logits = torch.log(sig / (1 - sig)).to(torch.float32)
    return {{"gating_output": logits.to(device), "e_score_correction_bias": bias.to(device)}}
'''


def grouped_topk(m, rows: list[int]) -> ProblemDraft:
    c = m.config
    e, k, g, tg, s = c["num_experts"], c["num_experts_per_tok"], c["n_group"], c["topk_group"], c["routed_scaling_factor"]
    return problem(
        set="FIB", name=f"deepseek-v3_moe_grouped_topk_e{e}_g{g}_tg{tg}_k{k}", op_type="moe_routing", model=m,
        description=(f"{m.name} noaux_tc router (vLLM/SGLang grouped_topk, FlashInfer-Bench moe routing): sigmoid "
                     f"scores (scoring_func), plus e_score_correction_bias for selection only; the {e} experts "
                     f"(num_experts) form n_group={g} groups, a group scores the sum of its top-2 biased scores, "
                     f"the best topk_group={tg} groups stay, then the top-{k} experts (num_experts_per_tok) among "
                     "them, sorted by biased score. Weights are the unbiased sigmoid scores of the chosen experts, "
                     f"renormalised (norm_topk_prob) and multiplied by routed_scaling_factor={s}."),
        axes={"num_tokens": var("Tokens routed"), "num_experts": const(e, "num_experts"),
              "top_k": const(k, "num_experts_per_tok")},
        inputs={"gating_output": tensor(["num_tokens", "num_experts"], "float32", "Router logits"),
                "e_score_correction_bias": tensor(["num_experts"], "float32", "Load-balancing bias per expert")},
        outputs={"topk_weights": tensor(["num_tokens", "top_k"], "float32"),
                 "topk_ids": tensor(["num_tokens", "top_k"], "int32", "Expert ids, < num_experts")},
        reference=_GROUPED_TOPK.format(n_group=g, topk_group=tg, top_k=k, scale=s),
        workloads=[{"num_tokens": t} for t in rows], custom_inputs_entrypoint="make_inputs",
        tolerance=tolerance_for("float32", matched_ratio=1.0))


_ROUTES = '''

def _routes(num_tokens, num_experts, top_k):
    """Distinct experts per token, with a skewed (Zipf-like) expert popularity as real routers show."""
    popularity = 1.0 / torch.arange(1, num_experts + 1, dtype=torch.float32) ** 0.5
    popularity = popularity[torch.randperm(num_experts)]
    return torch.multinomial(popularity.expand(num_tokens, -1), top_k, replacement=False)
'''

_PERMUTE = '''import torch


@torch.no_grad()
def run(hidden_states, topk_ids):
    num_tokens, top_k = topk_ids.shape
    flat = topk_ids.reshape(-1).long()
    order = torch.sort(flat, stable=True).indices             # (token, k) slots grouped by expert
    permuted = hidden_states[torch.div(order, top_k, rounding_mode="floor")]
    boundaries = torch.arange({num_experts} + 1, device=topk_ids.device)
    expert_offsets = torch.searchsorted(flat[order], boundaries).to(torch.int32)
    return permuted, expert_offsets, order.to(torch.int32)
''' + _ROUTES + '''

def make_inputs(axes, device):
    t, e, k, h = axes["num_tokens"], axes["num_experts"], axes["top_k"], axes["hidden_size"]
    return {{"hidden_states": torch.randn(t, h).to(torch.bfloat16).to(device),
            "topk_ids": _routes(t, e, k).to(torch.int32).to(device)}}
'''


def moe_permute(m, rows: list[int]) -> ProblemDraft:
    e, k, h = m.config["num_experts"], m.config["num_experts_per_tok"], m.config["hidden_size"]
    return problem(
        set="FIB", name=f"qwen3-30b-a3b_moe_permute_e{e}_k{k}_h{h}", op_type="moe_permute", model=m,
        description=(f"{m.name} MoE dispatch before the grouped expert GEMM (moe_align / permute): each token's "
                     f"top-{k} (num_experts_per_tok) slots are grouped by expert with a stable sort over the "
                     f"flattened (token, k) slots, the token's hidden row (hidden_size {h}) is copied to each of "
                     f"its slots, and expert_offsets[e] is the first permuted row of expert e (num_experts={e}). "
                     "Also returns the sorted slot order (slot = token * top_k + k)."),
        axes={"num_tokens": var("Tokens"), "num_experts": const(e, "num_experts"),
              "top_k": const(k, "num_experts_per_tok"), "hidden_size": const(h, "hidden_size"),
              "num_rows": {"type": "expr", "expression": "num_tokens * top_k", "description": "num_tokens * top_k"},
              "num_offsets": {"type": "expr", "expression": "num_experts + 1", "description": "num_experts + 1"}},
        inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], "bfloat16"),
                "topk_ids": tensor(["num_tokens", "top_k"], "int32", "Distinct experts per token, < num_experts")},
        outputs={"permuted_hidden_states": tensor(["num_rows", "hidden_size"], "bfloat16"),
                 "expert_offsets": tensor(["num_offsets"], "int32"),
                 "sorted_slots": tensor(["num_rows"], "int32", "Slot (token * top_k + k) of each permuted row")},
        reference=_PERMUTE.format(num_experts=e), workloads=[{"num_tokens": t} for t in rows],
        custom_inputs_entrypoint="make_inputs", tolerance=tolerance_for("int32"))


_COMBINE_INPUTS = _ROUTES + '''

def make_inputs(axes, device):
    t, e, k, h = axes["num_tokens"], axes["num_experts"], axes["top_k"], axes["hidden_size"]
    flat = _routes(t, e, k).reshape(-1)
    order = torch.sort(flat, stable=True).indices
    src_rows = torch.empty_like(order)
    src_rows[order] = torch.arange(t * k)                   # where each (token, k) result sits
    weights = torch.softmax(torch.randn(t, k), dim=-1)
    inputs = {"expert_output": torch.randn(t * k, h).to(torch.bfloat16).to(device),
              "topk_weights": weights.to(device), "src_rows": src_rows.reshape(t, k).to(torch.int32).to(device)}
    if "grad_output" in GRAD:
        inputs["grad_output"] = torch.randn(t, h).to(torch.bfloat16).to(device)
    return inputs
'''

_COMBINE = '''import torch

GRAD = ()


@torch.no_grad()
def run(expert_output, topk_weights, src_rows):
    num_tokens, top_k = src_rows.shape
    acc = (torch.float64 if expert_output.dtype == torch.float64 else torch.float32)
    gathered = expert_output[src_rows.reshape(-1).long()].reshape(num_tokens, top_k, -1).to(acc)
    out = (gathered * topk_weights.to(acc).unsqueeze(-1)).sum(dim=1)
    return out.to(expert_output.dtype)
''' + _COMBINE_INPUTS

_COMBINE_BACKWARD = '''import torch

GRAD = ("grad_output",)


@torch.no_grad()
def run(expert_output, topk_weights, src_rows, grad_output):
    """Gradients of out[t] = sum_k topk_weights[t, k] * expert_output[src_rows[t, k]]."""
    num_tokens, top_k = src_rows.shape
    acc = (torch.float64 if expert_output.dtype == torch.float64 else torch.float32)
    rows = src_rows.reshape(-1).long()
    g = grad_output.to(acc).unsqueeze(1)                                             # [T, 1, H]
    gathered = expert_output[rows].reshape(num_tokens, top_k, -1).to(acc)
    grad_weights = (gathered * g).sum(dim=-1)                                        # [T, K]
    grad_expert = torch.zeros(expert_output.shape, dtype=acc, device=expert_output.device)
    grad_expert[rows] = (topk_weights.to(acc).unsqueeze(-1) * g).reshape(num_tokens * top_k, -1)
    return grad_expert.to(expert_output.dtype), grad_weights
''' + _COMBINE_INPUTS


def moe_combine(m, rows: list[int], backward: bool = False) -> ProblemDraft:
    e, k, h = m.config["num_experts"], m.config["num_experts_per_tok"], m.config["hidden_size"]
    axes = {"num_tokens": var("Tokens"), "num_experts": const(e, "num_experts"),
            "top_k": const(k, "num_experts_per_tok"), "hidden_size": const(h, "hidden_size"),
            "num_rows": {"type": "expr", "expression": "num_tokens * top_k", "description": "num_tokens * top_k"}}
    inputs = {"expert_output": tensor(["num_rows", "hidden_size"], "bfloat16", "Expert results in expert-sorted order"),
              "topk_weights": tensor(["num_tokens", "top_k"], "float32", "Router weights"),
              "src_rows": tensor(["num_tokens", "top_k"], "int32", "Row of expert_output holding token t's k-th result "
                                                               "(a permutation of num_rows)")}
    what = (f"{m.name} MoE combine (unpermute + weighted sum, vLLM moe_unpermute / FlashInfer-Bench moe finalize): "
            f"out[t] = sum_k topk_weights[t, k] * expert_output[src_rows[t, k]] over the top-{k} "
            f"(num_experts_per_tok) results of each token, hidden_size {h}; rows come from a stable sort of routes "
            f"over num_experts={e} with skewed expert popularity.")
    if backward:
        inputs["grad_output"] = tensor(["num_tokens", "hidden_size"], "bfloat16", "Gradient of the combined output")
        return problem(
            set="L1", name=f"gpt-oss-120b_moe_combine_backward_k{k}_h{h}", op_type="moe_combine_backward", model=m,
            description=what + " Backward: grad_expert_output[src_rows[t, k]] = topk_weights[t, k] * grad_output[t], "
                               "grad_topk_weights[t, k] = <expert_output[src_rows[t, k]], grad_output[t]>.",
            axes=axes, inputs=inputs,
            outputs={"grad_expert_output": tensor(["num_rows", "hidden_size"], "bfloat16"),
                     "grad_topk_weights": tensor(["num_tokens", "top_k"], "float32")},
            reference=_COMBINE_BACKWARD, workloads=[{"num_tokens": t} for t in rows], backward=True,
            custom_inputs_entrypoint="make_inputs")
    return problem(
        set="FIB", name=f"gpt-oss-120b_moe_combine_k{k}_h{h}", op_type="moe_combine", model=m, description=what,
        axes=axes, inputs=inputs, outputs={"output": tensor(["num_tokens", "hidden_size"], "bfloat16")},
        reference=_COMBINE, workloads=[{"num_tokens": t} for t in rows],
        custom_inputs_entrypoint="make_inputs")


# --- sampling -------------------------------------------------------------------------------------
_TOP_K_TOP_P = '''import torch


@torch.no_grad()
def run(probs, top_k, top_p, uniform):
    """Top-k, renormalise, top-p (smallest set of most likely tokens whose mass reaches top_p), then one
    token by inverse-CDF over the kept tokens in vocabulary order with the given uniform number."""
    batch_size, vocab_size = probs.shape
    acc = (torch.float64 if probs.dtype == torch.float64 else torch.float32)
    p = probs.to(acc)
    sorted_p, order = torch.sort(p, dim=-1, descending=True)
    rank = torch.arange(vocab_size, device=probs.device).unsqueeze(0)
    in_top_k = rank < top_k.unsqueeze(-1)
    p_k = torch.where(in_top_k, sorted_p, torch.zeros_like(sorted_p))
    p_k = p_k / p_k.sum(dim=-1, keepdim=True)
    mass_before = torch.cumsum(p_k, dim=-1) - p_k
    keep_sorted = in_top_k & (mass_before < top_p.to(acc).unsqueeze(-1))
    keep = torch.zeros_like(keep_sorted).scatter(1, order, keep_sorted)
    kept = torch.where(keep, p, torch.zeros_like(p))
    cdf = torch.cumsum(kept, dim=-1)
    threshold = uniform.to(acc).unsqueeze(-1) * cdf[:, -1:]
    samples = (cdf <= threshold).sum(dim=-1).clamp(max=vocab_size - 1)
    return samples.to(torch.int32)
''' + _BUCKET + '''

def make_inputs(axes, device):
    b, v = axes["batch_size"], axes["vocab_size"]
    probs = _peaked_probs(b, v, device)
    top_k = torch.tensor([5, 10, 20, 40, 50, 64, 100, 500])[torch.randint(0, 8, (b,))]
    top_p = torch.empty(b)
    uniform = torch.empty(b)
    for i in range(b):
        p = probs[i].to(torch.float64)
        sorted_p, order = torch.sort(p, descending=True)
        k = int(top_k[i])
        renorm = sorted_p[:k] / sorted_p[:k].sum()
        cum = torch.cumsum(renorm, 0)
        # The top-p cut falls mid-way through a token of renormalised mass >= 2e-4: margin 1e-4.
        m = int(torch.searchsorted(cum, torch.tensor([0.5 + 0.48 * float(torch.rand(()))], dtype=torch.float64)))
        m = min(m, k - 1, int((renorm >= 2e-4).sum()) - 1)
        top_p[i] = float((cum[m - 1] if m > 0 else 0.0) + renorm[m] / 2)
        kept = torch.zeros_like(p)
        kept[order[:m + 1]] = p[order[:m + 1]]
        cdf = torch.cumsum(kept, 0)
        uniform[i] = _safe_uniform(cdf / cdf[-1])
    return {"probs": probs.to(device), "top_k": top_k.to(torch.int32).to(device),
            "top_p": top_p.to(device), "uniform": uniform.to(device)}
'''


def top_k_top_p_sampling(m, rows: list[int]) -> ProblemDraft:
    vocab = m.config["vocab_size"]
    return problem(
        set="FIB", name=f"llama-3.1-8b_top_k_top_p_sampling_v{vocab}", op_type="sampling", model=m,
        description=(f"{m.name} sampling step over the real vocabulary (vocab_size {vocab}), FlashInfer "
                     "top_k_top_p_sampling_from_probs with top-k applied first: per request top_k and top_p, "
                     "renormalise after top-k, keep the smallest most-likely set reaching top_p, then draw one token "
                     "by inverse CDF over the kept tokens in vocabulary order, driven by the given uniform number "
                     "(so the output is deterministic). Probabilities are distinct, and top_p and the uniforms keep "
                     "a margin from every cut, so rounding cannot change a token."),
        axes={"batch_size": var("Requests"), "vocab_size": const(vocab, "vocab_size")},
        inputs={"probs": tensor(["batch_size", "vocab_size"], "float32", "Next-token probabilities"),
                "top_k": tensor(["batch_size"], "int32", "Per-request top-k"),
                "top_p": tensor(["batch_size"], "float32", "Per-request nucleus mass"),
                "uniform": tensor(["batch_size"], "float32", "Uniform number in [0, 1) per request")},
        outputs={"samples": tensor(["batch_size"], "int32", "Sampled token id per request")},
        reference=_TOP_K_TOP_P, workloads=[{"batch_size": b} for b in rows],
        custom_inputs_entrypoint="make_inputs")


_MIN_P = '''import torch


@torch.no_grad()
def run(probs, min_p, uniform):
    """Keep tokens with p >= min_p * max(p), then one token by inverse CDF in vocabulary order."""
    vocab_size = probs.shape[-1]
    acc = (torch.float64 if probs.dtype == torch.float64 else torch.float32)
    p = probs.to(acc)
    threshold = p.amax(dim=-1, keepdim=True) * min_p.to(acc).unsqueeze(-1)
    kept = torch.where(p >= threshold, p, torch.zeros_like(p))
    cdf = torch.cumsum(kept, dim=-1)
    samples = (cdf <= uniform.to(acc).unsqueeze(-1) * cdf[:, -1:]).sum(dim=-1).clamp(max=vocab_size - 1)
    return samples.to(torch.int32)
''' + _BUCKET + '''

def make_inputs(axes, device):
    b, v = axes["batch_size"], axes["vocab_size"]
    probs = _peaked_probs(b, v, device)
    min_p = torch.empty(b)
    uniform = torch.empty(b)
    for i in range(b):
        p = probs[i].to(torch.float64)
        ratio = torch.sort(p / p.max(), descending=True).values[:4096]
        gaps = ratio[:-1] / ratio[1:]
        target = 0.02 + 0.28 * float(torch.rand(()))
        n = int((ratio >= target).sum())                      # tokens kept at the target
        # Cut between two kept/dropped neighbours whose ratio differs by >= 1%: no rounding flips a token.
        wide = torch.nonzero(gaps >= 1.01).flatten() + 1
        n = int(wide[torch.argmin((wide - n).abs())])
        min_p[i] = float(torch.sqrt(ratio[n - 1] * ratio[n]))
        kept = torch.where(p >= p.max() * float(min_p[i]), p, torch.zeros_like(p))
        cdf = torch.cumsum(kept, 0)
        uniform[i] = _safe_uniform(cdf / cdf[-1])
    return {"probs": probs.to(device), "min_p": min_p.to(device), "uniform": uniform.to(device)}
'''


def min_p_sampling(m, rows: list[int]) -> ProblemDraft:
    vocab = m.config["vocab_size"]
    return problem(
        set="FIB", name=f"qwen3-8b_min_p_sampling_v{vocab}", op_type="sampling", model=m,
        description=(f"{m.name} min-p sampling over the real vocabulary (vocab_size {vocab}), FlashInfer "
                     "min_p_sampling_from_probs: keep tokens whose probability is at least min_p times the "
                     "request's largest, then draw one token by inverse CDF over the kept tokens in vocabulary "
                     "order with the given uniform number. min_p and the uniforms keep a margin from every cut."),
        axes={"batch_size": var("Requests"), "vocab_size": const(vocab, "vocab_size")},
        inputs={"probs": tensor(["batch_size", "vocab_size"], "float32", "Next-token probabilities"),
                "min_p": tensor(["batch_size"], "float32", "Per-request min-p"),
                "uniform": tensor(["batch_size"], "float32", "Uniform number in [0, 1) per request")},
        outputs={"samples": tensor(["batch_size"], "int32", "Sampled token id per request")},
        reference=_MIN_P, workloads=[{"batch_size": b} for b in rows],
        custom_inputs_entrypoint="make_inputs")


_SOFTCAP_SOFTMAX = '''import torch

FINAL_LOGIT_SOFTCAPPING = {cap!r}


@torch.no_grad()
def run(logits, temperature):
    acc = (torch.float64 if logits.dtype == torch.float64 else torch.float32)
    x = torch.tanh(logits.to(acc) / FINAL_LOGIT_SOFTCAPPING) * FINAL_LOGIT_SOFTCAPPING
    return torch.log_softmax(x / temperature.to(acc).unsqueeze(-1), dim=-1)


def make_inputs(axes, device):
    b, v = axes["batch_size"], axes["vocab_size"]
    logits = torch.randn(b, v) * 6.0 + torch.randn(b, 1) * 4.0   # raw logits reach past the cap
    temperature = torch.empty(b).uniform_(0.3, 1.5)
    return {{"logits": logits.to(device), "temperature": temperature.to(device)}}
'''


def softcap_softmax(m, rows: list[int]) -> ProblemDraft:
    vocab, cap = m.config["vocab_size"], m.config["final_logit_softcapping"]
    return problem(
        set="FIB", name=f"gemma-2-9b_softcap_temperature_logprobs_v{vocab}", op_type="sampling", model=m,
        description=(f"{m.name} logits to log-probabilities (the logprobs a server returns, vLLM compute_logprobs): final logit soft-capping "
                     f"cap * tanh(logits / cap) with final_logit_softcapping {cap}, divided by a per-request "
                     f"temperature, log-softmax over the real vocabulary (vocab_size {vocab})."),
        axes={"batch_size": var("Requests"), "vocab_size": const(vocab, "vocab_size")},
        inputs={"logits": tensor(["batch_size", "vocab_size"], "float32", "Raw LM-head logits"),
                "temperature": tensor(["batch_size"], "float32", "Per-request temperature > 0")},
        outputs={"logprobs": tensor(["batch_size", "vocab_size"], "float32")},
        reference=_SOFTCAP_SOFTMAX.format(cap=cap), workloads=[{"batch_size": b} for b in rows],
        custom_inputs_entrypoint="make_inputs")


_PENALTIES = '''import torch


@torch.no_grad()
def run(logits, prompt_token_ids, output_token_ids, repetition_penalties, frequency_penalties, presence_penalties):
    """vLLM apply_penalties: repetition penalty on tokens seen in the prompt or output (divide positive
    logits, multiply negative ones), then frequency (per occurrence) and presence penalties on output tokens."""
    acc = (torch.float64 if logits.dtype == torch.float64 else torch.float32)
    x = logits.to(acc)
    counts = torch.zeros_like(x).scatter_add(1, output_token_ids.long(),
                                              torch.ones(output_token_ids.shape, dtype=acc, device=x.device))
    in_prompt = torch.zeros(x.shape, dtype=torch.bool, device=x.device).scatter(1, prompt_token_ids.long(), True)
    seen = in_prompt | (counts > 0)
    rep = repetition_penalties.to(acc).unsqueeze(-1)
    x = torch.where(seen, torch.where(x > 0, x / rep, x * rep), x)
    x = x - frequency_penalties.to(acc).unsqueeze(-1) * counts
    return x - presence_penalties.to(acc).unsqueeze(-1) * (counts > 0).to(acc)


def make_inputs(axes, device):
    b, v, lp, lo = axes["batch_size"], axes["vocab_size"], axes["prompt_len"], axes["output_len"]
    pool = torch.randint(0, v, (b, 512))        # text repeats itself: draw ids from a per-request pool
    prompt = torch.gather(pool, 1, torch.randint(0, 512, (b, lp)))
    output = torch.gather(pool, 1, torch.randint(0, 512, (b, lo)))
    return {"logits": (torch.randn(b, v) * 3.0).to(device), "prompt_token_ids": prompt.to(device),
            "output_token_ids": output.to(device),
            "repetition_penalties": torch.empty(b).uniform_(1.0, 1.5).to(device),
            "frequency_penalties": torch.empty(b).uniform_(0.0, 1.0).to(device),
            "presence_penalties": torch.empty(b).uniform_(0.0, 1.0).to(device)}
'''


def penalties(m, rows: list[tuple]) -> ProblemDraft:
    vocab = m.config["vocab_size"]
    return problem(
        set="FIB", name=f"phi-4_sampling_penalties_v{vocab}", op_type="sampling", model=m,
        description=(f"{m.name} logits penalties before sampling over the real vocabulary (vocab_size {vocab}), as "
                     "vLLM applies them: repetition penalty on tokens seen in the prompt or generated so far "
                     "(positive logits divided, negative multiplied), frequency penalty times each token's count "
                     "in the output, presence penalty on tokens present in the output."),
        axes={"batch_size": var("Requests"), "vocab_size": const(vocab, "vocab_size"),
              "prompt_len": var("Prompt tokens per request"), "output_len": var("Generated tokens per request")},
        inputs={"logits": tensor(["batch_size", "vocab_size"], "float32"),
                "prompt_token_ids": tensor(["batch_size", "prompt_len"], "int64", "Prompt tokens, < vocab_size"),
                "output_token_ids": tensor(["batch_size", "output_len"], "int64", "Generated tokens, < vocab_size"),
                "repetition_penalties": tensor(["batch_size"], "float32", ">= 1"),
                "frequency_penalties": tensor(["batch_size"], "float32"),
                "presence_penalties": tensor(["batch_size"], "float32")},
        outputs={"penalized_logits": tensor(["batch_size", "vocab_size"], "float32")},
        reference=_PENALTIES, workloads=_workloads(("batch_size", "prompt_len", "output_len"), rows),
        custom_inputs_entrypoint="make_inputs",
        tolerance=tolerance_for("float32", matched_ratio=1.0))  # penalties touch few tokens: every one counts


_SPEC_VERIFY = '''import torch


@torch.no_grad()
def run(draft_probs, draft_token_ids, target_probs, uniform_accept, uniform_sample):
    """Chain speculative sampling: draft token i is accepted while u_i * q(token) < p(token); at the first
    rejection one token is drawn from normalise(max(p - q, 0)), or, if all were accepted, a bonus token
    from the target's last distribution; both by inverse CDF in vocabulary order with uniform_sample."""
    batch_size, num_spec, vocab_size = draft_probs.shape
    acc = (torch.float64 if draft_probs.dtype == torch.float64 else torch.float32)
    ids = draft_token_ids.long().unsqueeze(-1)
    q = torch.gather(draft_probs.to(acc), 2, ids).squeeze(-1)
    p = torch.gather(target_probs[:, :num_spec].to(acc), 2, ids).squeeze(-1)
    accept = uniform_accept.to(acc) * q < p
    accepted = torch.cumprod(accept.to(torch.int32), dim=-1).sum(dim=-1)
    output = torch.full((batch_size, num_spec + 1), -1, dtype=torch.int32, device=draft_probs.device)
    for b in range(batch_size):
        n = int(accepted[b])
        if n < num_spec:
            dist = torch.clamp(target_probs[b, n].to(acc) - draft_probs[b, n].to(acc), min=0)
        else:
            dist = target_probs[b, num_spec].to(acc)
        cdf = torch.cumsum(dist, dim=-1)
        token = (cdf <= uniform_sample[b].to(acc) * cdf[-1]).sum().clamp(max=vocab_size - 1)
        output[b, :n] = draft_token_ids[b, :n]
        output[b, n] = token.to(torch.int32)
    return output, accepted.to(torch.int32)
''' + _BUCKET + '''

def make_inputs(axes, device):
    b, s, v = axes["batch_size"], axes["num_spec"], axes["vocab_size"]
    base = torch.randn(b, s + 1, v) * 3.0
    target = torch.softmax(base + 0.7 * torch.randn(b, s + 1, v), dim=-1)
    draft = torch.softmax(base[:, :s] + 0.7 * torch.randn(b, s, v), dim=-1)
    ids = torch.multinomial(draft.reshape(b * s, v), 1).reshape(b, s)
    q = torch.gather(draft, 2, ids.unsqueeze(-1)).squeeze(-1).to(torch.float64)
    p = torch.gather(target[:, :s], 2, ids.unsqueeze(-1)).squeeze(-1).to(torch.float64)
    ratio = p / q
    u = torch.rand(b, s, dtype=torch.float64)
    near = (u - ratio).abs() < 1e-3                        # keep the accept test away from equality
    u = torch.where(near, torch.where(ratio > 0.5, ratio - 2e-3, ratio + 2e-3), u)
    accept = u * q < p
    accepted = torch.cumprod(accept.to(torch.int64), dim=-1).sum(dim=-1)
    uniform_sample = torch.empty(b)
    for i in range(b):
        n = int(accepted[i])
        dist = (target[i, n].to(torch.float64) - draft[i, n].to(torch.float64)).clamp(min=0) if n < s \\
            else target[i, s].to(torch.float64)
        cdf = torch.cumsum(dist, 0)
        uniform_sample[i] = _safe_uniform(cdf / cdf[-1])
    return {"draft_probs": draft.to(device), "draft_token_ids": ids.to(torch.int32).to(device),
            "target_probs": target.to(device), "uniform_accept": u.to(torch.float32).to(device),
            "uniform_sample": uniform_sample.to(device)}
'''


def speculative_verify(m, rows: list[tuple]) -> ProblemDraft:
    vocab = m.config["vocab_size"]
    return problem(
        set="FIB", name=f"llama-3.1-70b_chain_speculative_sampling_v{vocab}", op_type="speculative_decoding",
        model=m,
        description=(f"{m.name} as the target of speculative decoding (a Llama-3.2-1B draft shares its "
                     f"vocab_size {vocab}): FlashInfer chain_speculative_sampling. Draft token i is accepted while "
                     "uniform_accept[i] * q_i(token) < p_i(token); at the first rejection a correction token is drawn "
                     "from normalise(max(p - q, 0)), after all num_spec accepted a bonus token from the target's "
                     "last distribution, by inverse CDF in vocabulary order with uniform_sample. Outputs the emitted "
                     "tokens (-1 after the last) and the number of accepted draft tokens. The uniforms keep a margin "
                     "from every decision boundary."),
        axes={"batch_size": var("Requests"), "num_spec": var("Draft tokens per request"),
              "vocab_size": const(vocab, "vocab_size"),
              "num_out": {"type": "expr", "expression": "num_spec + 1", "description": "num_spec + 1"}},
        inputs={"draft_probs": tensor(["batch_size", "num_spec", "vocab_size"], "float32"),
                "draft_token_ids": tensor(["batch_size", "num_spec"], "int32", "Tokens the draft sampled, < vocab_size"),
                "target_probs": tensor(["batch_size", "num_out", "vocab_size"], "float32"),
                "uniform_accept": tensor(["batch_size", "num_spec"], "float32"),
                "uniform_sample": tensor(["batch_size"], "float32")},
        outputs={"output_token_ids": tensor(["batch_size", "num_out"], "int32"),
                 "accepted_len": tensor(["batch_size"], "int32")},
        reference=_SPEC_VERIFY, workloads=_workloads(("batch_size", "num_spec"), rows),
        custom_inputs_entrypoint="make_inputs")


# --- fused elementwise kernels around attention and MLP -------------------------------------------
_FUSED_ADD_RMSNORM = '''import torch


@torch.no_grad()
def run(input, residual, weight, eps):
    """FlashInfer fused_add_rmsnorm: residual += input (stored in the input dtype), output = RMSNorm of the sum."""
    acc = (torch.float64 if input.dtype == torch.float64 else torch.float32)
    x = input.to(acc) + residual.to(acc)
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight.to(acc)
    return normed.to(input.dtype), x.to(input.dtype)
'''


def fused_add_rmsnorm(m, rows: list[int]) -> ProblemDraft:
    h, eps = m.config["hidden_size"], m.config["rms_norm_eps"]
    return problem(
        set="FIB", name=f"mistral-large-2411_fused_add_rmsnorm_h{h}", op_type="rmsnorm", model=m,
        description=(f"{m.name} residual add fused with RMSNorm (FlashInfer fused_add_rmsnorm): the new residual is "
                     f"input + residual, the output is its RMSNorm over hidden_size {h} with rms_norm_eps {eps}, "
                     "statistics in fp32; returns both (normed, residual)."),
        axes={"num_tokens": var("Tokens"), "hidden_size": const(h, "hidden_size")},
        inputs={"input": tensor(["num_tokens", "hidden_size"], "bfloat16", "Sub-layer output"),
                "residual": tensor(["num_tokens", "hidden_size"], "bfloat16", "Residual stream"),
                "weight": tensor(["hidden_size"], "bfloat16"), "eps": tensor(None, "float32")},
        outputs={"output": tensor(["num_tokens", "hidden_size"], "bfloat16"),
                 "residual_out": tensor(["num_tokens", "hidden_size"], "bfloat16")},
        reference=_FUSED_ADD_RMSNORM, workloads=[{"num_tokens": t} for t in rows], scalars={"eps": eps})


_ACT_AND_MUL = '''import torch


@torch.no_grad()
def run(input):
    acc = (torch.float64 if input.dtype == torch.float64 else torch.float32)
    d = input.shape[-1] // 2
    x = input.to(acc)
    return ({act} * x[..., d:]).to(input.dtype)
'''


def act_and_mul(m, name: str, act: str, tp: int, rows: list[int]) -> ProblemDraft:
    inter = m.config["intermediate_size"]
    d = inter // tp
    code = {"silu": "torch.nn.functional.silu(x[..., :d])",
            "gelu_tanh": 'torch.nn.functional.gelu(x[..., :d], approximate="tanh")'}[act]
    return problem(
        set="FIB", name=name, op_type="activation", model=m,
        description=(f"{m.name} gated MLP activation (FlashInfer {act}_and_mul): {act}(gate) * up over the fused "
                     f"[gate | up] projection output; intermediate_size {inter} sharded over tensor parallelism "
                     f"{tp} gives {d} per GPU."),
        axes={"num_tokens": var("Tokens"), "d": const(d, f"intermediate_size / {tp} (TP={tp} shard)"),
              "two_d": {"type": "expr", "expression": "2 * d", "description": "gate and up halves"}},
        inputs={"input": tensor(["num_tokens", "two_d"], "bfloat16", "[gate | up]")},
        outputs={"output": tensor(["num_tokens", "d"], "bfloat16")},
        reference=_ACT_AND_MUL.format(act=code), workloads=[{"num_tokens": t} for t in rows])


_LAST_TOKEN = '''import torch


@torch.no_grad()
def run(hidden_states, qo_indptr):
    """Keep only each sequence's last token before the LM head (logits are needed for those alone)."""
    return hidden_states[(qo_indptr[1:] - 1).long()]
''' + _SPLIT + '''

def make_inputs(axes, device):
    b, t, h = axes["batch_size"], axes["num_tokens"], axes["hidden_size"]
    return {"hidden_states": torch.randn(t, h).to(torch.bfloat16).to(device),
            "qo_indptr": _offsets(_split(t, b)).to(device)}
'''


def last_token_gather(m, rows: list[tuple]) -> ProblemDraft:
    h = m.config["text_config.hidden_size"]
    return problem(
        set="FIB", name=f"qwen2.5-vl-7b_last_token_gather_h{h}", op_type="gather", model=m,
        description=(f"{m.name} (text decoder) logits pruning: from a packed batch of prefill/decode tokens keep the "
                     f"last token of each sequence (row qo_indptr[b+1] - 1), hidden_size {h} "
                     "(text_config.hidden_size), before the LM head."),
        axes={"batch_size": var("Sequences"), "num_tokens": var("Tokens, all sequences"),
              "hidden_size": const(h, "text_config.hidden_size"),
              "len_indptr": {"type": "expr", "expression": "batch_size + 1", "description": "batch_size + 1"}},
        inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], "bfloat16"),
                "qo_indptr": tensor(["len_indptr"], "int32", "Token offsets per sequence, each sequence >= 1 token")},
        outputs={"last_hidden_states": tensor(["batch_size", "hidden_size"], "bfloat16")},
        reference=_LAST_TOKEN, workloads=_workloads(("batch_size", "num_tokens"), rows),
        custom_inputs_entrypoint="make_inputs", constraints=["num_tokens == qo_indptr[-1].item()"],
        tolerance=tolerance_for("int32"))


# --- the set ----------------------------------------------------------------------------------------
# --- GPU tier (workload.jsonl; the recipes' own small workloads become workload.cpu.jsonl) ------------
# Local sweeps (catalog/sweeps.py is written on another branch; the lead dedupes at merge).

SERVE_TOKENS = (1, 4, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384, 32768, 65536)
"""Tokens in a serving step, decode (1 per sequence) through chunked prefill budgets to a 64k-token prefill."""
DECODE_CONTEXTS = ((1, 1024), (1, 8192), (1, 32768), (2, 16384), (4, 4096), (4, 32768), (8, 2048), (8, 16384),
                   (16, 1024), (16, 8192), (32, 4096), (32, 16384), (64, 2048), (64, 8192), (128, 1024), (128, 4096))
"""(sequences, mean KV context): decode batches of 1-128 over contexts of 1k-32k tokens (512k cached tokens at
most). The references loop over sequences in Python, which the analysis traces once per sequence and input draw:
batches stop at 128 so that a problem analyses in about a minute of CPU, not several."""
PREFILL_CHUNKS = ((1, 512, 2048), (1, 1024, 4096), (1, 2048, 8192), (2, 2048, 16384), (1, 4096, 8192),
                  (4, 4096, 32768), (1, 8192, 16384), (2, 8192, 65536), (8, 8192, 32768), (1, 16384, 32768),
                  (4, 16384, 131072), (16, 16384, 65536), (1, 32768, 65536), (8, 32768, 262144),
                  (2, 65536, 131072), (1, 65536, 65536))
"""(sequences, new tokens, tokens with the cached prefix): chunked prefill over 2k-256k cached tokens."""
RAGGED_PREFILL = ((1, 1024, 1024), (1, 2048, 2048), (1, 512, 4096), (1, 4096, 4096), (2, 4096, 8192),
                  (1, 8192, 8192), (4, 8192, 8192), (1, 16384, 16384), (8, 16384, 16384), (2, 16384, 32768),
                  (1, 32768, 32768), (16, 32768, 32768), (4, 32768, 65536), (1, 65536, 65536), (8, 65536, 65536),
                  (32, 65536, 65536))
"""(sequences, query tokens, key tokens): prefill of 1k-64k tokens, packed (ragged) as serving batches are."""
SAMPLING_BATCHES = (1, 2, 3, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)


def _paged(pairs, pool: float = 1.25):
    """(batch, context) pairs as paged-cache axes: the batch's pages, and a pool a quarter larger."""
    rows = []
    for batch, context in pairs:
        used = batch * context // PAGE_SIZE
        rows.append({"batch_size": batch, "num_kv_indices": used, "num_pages": int(used * pool)})
    return rows


def _prefill_paged(rows):
    return [{"batch_size": b, "total_q": q, "num_kv_indices": kv // PAGE_SIZE + b,
             "num_pages": (kv // PAGE_SIZE + b) * 5 // 4} for b, q, kv in rows]


APPEND_STEPS = ((1, 1), (8, 8), (32, 32), (128, 128), (512, 512), (1, 2048), (4, 4096), (1, 8192), (16, 8192),
                (256, 8192), (2, 16384), (8, 16384), (1, 32768), (4, 65536), (1, 131072), (8, 131072))
"""(sequences, new tokens): decode steps (one token per sequence), chunked prefill and whole long prompts."""


def _append(rows, context: int = 4096):
    """Each sequence holds about `context` tokens before the step (and at least its new ones after it)."""
    out = []
    for b, nnz in rows:
        used = (b * context + nnz) // PAGE_SIZE + b
        out.append({"batch_size": b, "nnz": nnz, "num_kv_indices": used, "num_pages": used * 5 // 4})
    return out


PENALTY_BATCHES = ((1, 1024, 1), (1, 32768, 4096), (2, 8192, 512), (4, 4096, 1024), (8, 2048, 256),
                   (16, 16384, 2048), (32, 1024, 64), (48, 4096, 1), (64, 8192, 1024), (96, 2048, 512),
                   (128, 4096, 128), (192, 1024, 2048), (256, 8192, 256), (384, 2048, 32), (512, 1024, 1024),
                   (1024, 4096, 512))
"""(requests, prompt tokens, generated tokens): decode batches with 1k-32k-token prompts."""
SPECULATIVE_BATCHES = ((1, 1), (1, 4), (2, 3), (4, 4), (8, 2), (8, 5), (16, 3), (16, 7), (32, 1), (32, 4), (48, 3),
                       (64, 2), (24, 5), (40, 3), (56, 3), (80, 2))
"""(requests, draft tokens per request). Which drafts are accepted depends on the probabilities' values, so T_SOL
is derived by running the reference for real, which the analysis does for inputs up to 256 MiB: the largest
batches stop there (80 requests of 2 draft tokens over a 128k vocabulary)."""
LAST_TOKEN_BATCHES = ((1, 1024), (1, 8192), (1, 65536), (2, 16384), (4, 4096), (8, 8192), (16, 16384), (32, 32),
                      (64, 64), (64, 8192), (128, 128), (128, 16384), (256, 256), (256, 32768), (512, 512),
                      (512, 65536))
"""(sequences, packed tokens): decode-only batches (one token each) through long prefills."""


def drafts() -> list[ProblemDraft]:
    return [
        with_gpu_tier(paged_decode(LLAMA_8B, "llama-3.1-8b_gqa_paged_decode_h32_kv8_d128_ps16",
                     "num_attention_heads", "num_key_value_heads", "derived.head_dim",
                     [(1, 8, 64), (1, 256, 320), (4, 130, 200), (7, 300, 400), (16, 512, 600), (33, 777, 900),
                      (32, 1000, 1100), (64, 1024, 1200)]), _paged(DECODE_CONTEXTS)),
        with_gpu_tier(paged_decode(QWEN3_32B, "qwen3-32b_gqa_paged_decode_h64_kv8_d128_ps16",
                     "num_attention_heads", "num_key_value_heads", "head_dim",
                     [(1, 4, 32), (2, 100, 128), (3, 255, 300), (8, 200, 256), (13, 512, 700), (24, 640, 800),
                      (48, 900, 1000), (64, 960, 1024)]), _paged(DECODE_CONTEXTS)),
        with_gpu_tier(ragged_prefill(QWEN3_8B, "qwen3-8b_ragged_prefill_causal_h32_kv8_d128",
                       "num_attention_heads", "num_key_value_heads", "head_dim",
                       [(1, 16, 16), (1, 255, 255), (2, 300, 700), (4, 512, 512), (3, 400, 1500), (7, 700, 900),
                        (16, 1000, 1000), (8, 1024, 2048)]),
                      [dict(zip(("batch_size", "total_q", "total_kv"), r)) for r in RAGGED_PREFILL]),
        with_gpu_tier(paged_prefill(LLAMA_70B, "llama-3.1-70b_paged_prefill_prefix_h64_kv8_d128_ps16",
                      "num_attention_heads", "num_key_value_heads", "derived.head_dim",
                      [(1, 7, 8, 16), (1, 128, 40, 64), (2, 255, 64, 100), (4, 64, 100, 128), (3, 300, 130, 200),
                       (8, 512, 96, 160), (5, 400, 150, 256), (16, 256, 128, 256)]),
                      _prefill_paged(PREFILL_CHUNKS)),
        with_gpu_tier(mla_decode(DSV3, [(1, 8, 64), (1, 300, 320), (4, 200, 256), (9, 333, 400), (16, 512, 600), (32, 800, 1000),
                          (64, 1024, 1200), (128, 1536, 2048)]), _paged(DECODE_CONTEXTS)),
        with_gpu_tier(swa_sink_decode(GPT_OSS_20B, [(1, 4, 16), (1, 300, 320), (4, 130, 256), (8, 400, 512), (17, 555, 700),
                                      (32, 1000, 1200), (64, 1500, 1800), (128, 2000, 2048)]),
                      _paged(DECODE_CONTEXTS)),
        with_gpu_tier(merge_states(QWEN3_32B, "qwen3-32b_merge_attn_states_h64_d128",
                                   [1, 7, 32, 128, 255, 512, 1024, 2048]), tokens(SERVE_TOKENS)),
        with_gpu_tier(append_kv(QWEN25_7B, [(1, 1, 4, 16), (8, 8, 100, 128), (64, 64, 900, 1024), (1, 255, 20, 32),
                              (2, 512, 40, 64), (4, 1000, 100, 128), (16, 2048, 300, 512), (33, 33, 500, 600)]),
                      _append(APPEND_STEPS)),
        with_gpu_tier(rope_llama3(LLAMA_8B, [1, 7, 32, 128, 255, 512, 1024, 2048]), tokens(SERVE_TOKENS, "nnz")),
        with_gpu_tier(softmax_topk(MIXTRAL, "mixtral-8x7b_moe_softmax_topk_e8_k2",
                                   [1, 7, 32, 128, 255, 1024, 2048, 4096]), tokens(SERVE_TOKENS)),
        with_gpu_tier(softmax_topk(QWEN3_MOE, "qwen3-30b-a3b_moe_softmax_topk_e128_k8",
                                   [1, 7, 32, 128, 255, 1024, 2048, 4096]), tokens(SERVE_TOKENS)),
        with_gpu_tier(softmax_topk(DSV2_LITE, "deepseek-v2-lite_moe_softmax_topk_e64_k6",
                                   [1, 3, 16, 64, 100, 512, 1000, 4096]), tokens(SERVE_TOKENS)),
        with_gpu_tier(grouped_topk(DSV3_GATE, [1, 7, 32, 128, 255, 1024, 2048, 4096]), tokens(SERVE_TOKENS)),
        with_gpu_tier(moe_permute(QWEN3_MOE, [1, 7, 32, 128, 255, 512, 1024, 2048]), tokens(SERVE_TOKENS)),
        with_gpu_tier(moe_combine(GPT_OSS_120B, [1, 7, 32, 128, 255, 512, 1024, 2048]), tokens(SERVE_TOKENS)),
        with_gpu_tier(moe_combine(GPT_OSS_120B, [1, 7, 32, 128, 255, 512, 1024, 2048], backward=True),
                      tokens(SERVE_TOKENS)),
        with_gpu_tier(top_k_top_p_sampling(LLAMA_8B, [4, 5, 6, 7, 8, 11, 13, 16]),
                      tokens(SAMPLING_BATCHES, "batch_size")),
        with_gpu_tier(min_p_sampling(QWEN3_8B, [4, 5, 6, 8, 12, 16, 24, 32]), tokens(SAMPLING_BATCHES, "batch_size")),
        with_gpu_tier(softcap_softmax(GEMMA2_9B, [1, 2, 4, 7, 8, 16, 32, 64]), tokens(SAMPLING_BATCHES, "batch_size")),
        with_gpu_tier(penalties(PHI4, [(1, 16, 1), (2, 100, 20), (4, 1000, 50), (8, 255, 128), (16, 512, 300),
                                       (32, 2048, 100), (3, 4096, 1000), (64, 128, 512)]),
                      [{"batch_size": b, "prompt_len": lp, "output_len": lo} for b, lp, lo in PENALTY_BATCHES]),
        with_gpu_tier(speculative_verify(LLAMA_70B, [(6, 1), (5, 3), (4, 4), (6, 2), (3, 7), (4, 5), (8, 3), (8, 5)]),
                      [{"batch_size": b, "num_spec": k} for b, k in SPECULATIVE_BATCHES]),
        with_gpu_tier(fused_add_rmsnorm(MISTRAL_LARGE, [1, 4, 16, 64, 128, 255, 512, 1024]), tokens(SERVE_TOKENS)),
        with_gpu_tier(act_and_mul(LLAMA_70B, "llama-3.1-70b_silu_and_mul_tp8_d3584", "silu", 8,
                                  [1, 7, 32, 128, 255, 1024, 2048, 4096]), tokens(SERVE_TOKENS)),
        with_gpu_tier(act_and_mul(GEMMA3_27B, "gemma-3-27b_gelu_tanh_and_mul_tp8_d2688", "gelu_tanh", 8,
                                  [1, 7, 32, 128, 255, 1024, 2048, 4096]), tokens(SERVE_TOKENS)),
        with_gpu_tier(last_token_gather(QWEN25_VL, [(1, 1), (2, 9), (8, 8), (4, 1000), (16, 2048), (33, 4000),
                                                    (64, 4096), (128, 8192)]),
                      [{"batch_size": b, "num_tokens": t} for b, t in LAST_TOKEN_BATCHES]),
    ]
