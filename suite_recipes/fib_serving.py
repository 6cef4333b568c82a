"""FIB: the FlashInfer-Bench kinds catalog/fib.py lacks: serving GEMMs, fused add + RMSNorm, MLA prefill and
the FP8 block-scale MoE.

- GEMMs at real models' serving shapes, as FlashInfer-Bench's ``gemm_n*_k*`` definitions (C = A @ B^T):
  bf16, and FP8 with a per-token activation scale and a per-channel weight scale (FBGEMM / vLLM rowwise).
- ``fused_add_rmsnorm`` as FlashInfer computes it: the sum in fp32 is written back to the residual (bf16)
  and normalised from fp32; both in-place results are outputs.
- DeepSeek-V3 MLA prefill over ragged (packed) sequences in the non-absorbed form FlashInfer's
  ``BatchPrefillWithRaggedKVCacheWrapper`` runs for prefill (qk head_dim 192 = qk_nope 128 + qk_rope 64,
  v head_dim 128, 128 heads), causal with the queries at the end of each sequence (a cached prefix).
- DeepSeek-V3's FP8 block-scale MoE as FlashInfer's ``trtllm_fp8_block_scale_moe`` (FlashInfer-Bench's
  ``moe_fp8_block_scale_ds_routing_topk8_ng8_kg4``): noaux_tc routing from fp32 logits, 128x128 weight
  blocks and 1x128 activation blocks, GEMM1 -> SwiGLU -> GEMM2 on this rank's experts. Its routing logits are
  generated tie-free: every expert's biased score keeps a margin of at least 2e-4 from every other score and
  every group's top-2 sum from every other group's, far above fp32 rounding.

Every dimension is a published value of the model's record in model-configs.json. Two tiers: 16 serving-
scale workloads in ``workload.jsonl``, 8 small ones in ``workload.cpu.jsonl``.
"""

from __future__ import annotations

import math

from suite_recipes.builder import const, problem, slug, tensor, var
from suite_recipes.models import model
from suite_recipes.snippets import SPLIT_OFFSETS
from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for

BF16 = tolerance_for("bfloat16")
GEMM_TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
CPU_GEMM_TOKENS = (3, 5, 7, 12, 24, 40, 77, 96)
NORM_TOKENS = (1, 4, 16, 64, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768, 49152, 65536)
CPU_NORM_TOKENS = (3, 7, 24, 100, 255, 384, 777, 1500)

LLAMA_70B = model("Llama-3.1-70B", "meta-llama/Llama-3.1-70B", "language",
                  {"hidden_size": 8192, "num_attention_heads": 64, "num_key_value_heads": 8, "derived.head_dim": 128,
                   "intermediate_size": 28672})
DSV3 = model("DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "language",
             {"hidden_size": 7168, "rms_norm_eps": 1e-06})
DSV3_MLA = model("DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "language",
                 {"num_attention_heads": 128, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                  "v_head_dim": 128, "rope_scaling.factor": 40, "rope_scaling.mscale_all_dim": 1.0})
DSV3_MOE = model("DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "language",
                 {"hidden_size": 7168, "moe_intermediate_size": 2048, "num_experts": 256, "num_experts_per_tok": 8,
                  "n_group": 8, "topk_group": 4, "routed_scaling_factor": 2.5, "scoring_func": "sigmoid",
                  "topk_method": "noaux_tc", "published_quantization.weight_block_size": [128, 128]})


# --- GEMMs ------------------------------------------------------------------------------------------------
_GEMM_BF16 = '''import torch


def make_inputs(axes, device):
    m, n, k = axes["M"], axes["N"], axes["K"]
    return {"A": torch.randn(m, k, device=device).to(torch.bfloat16),
            "B": (torch.randn(n, k, device=device) * k ** -0.5).to(torch.bfloat16)}


@torch.no_grad()
def run(A, B):
    return torch.matmul(A, B.T)
'''

_GEMM_FP8 = '''import torch


def make_inputs(axes, device):
    m, n, k = axes["M"], axes["N"], axes["K"]
    x = torch.randn(m, k, device=device)
    w = torch.randn(n, k, device=device) * k ** -0.5
    a_scale = x.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 448.0
    b_scale = w.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 448.0
    return {"A": (x / a_scale).clamp(-448, 448).to(torch.float8_e4m3fn), "A_scale": a_scale,
            "B": (w / b_scale).clamp(-448, 448).to(torch.float8_e4m3fn), "B_scale": b_scale}


@torch.no_grad()
def run(A, A_scale, B, B_scale):
    acc = torch.promote_types(A_scale.dtype, torch.float32)
    out = (A.to(acc) @ B.to(acc).T) * A_scale.to(acc) * B_scale.to(acc).T
    return out.to(torch.bfloat16)
'''


def gemm_bf16(m, n: int, k: int, what: str) -> ProblemDraft:
    return problem(
        "FIB", m, f"{slug(m)}_gemm_n{n}_k{k}", "gemm",
        f"{m.name} serving GEMM C = A @ B^T in bf16 (fp32 accumulation), FlashInfer-Bench's gemm_n*_k* kind at "
        f"this model's shape: {what}.",
        axes={"M": var("tokens in the batch"), "N": const(n, "out features"), "K": const(k, "in features")},
        inputs={"A": tensor(["M", "K"], "bfloat16"), "B": tensor(["N", "K"], "bfloat16", "nn.Linear weight [out, in]")},
        outputs={"C": tensor(["M", "N"], "bfloat16")}, reference=_GEMM_BF16,
        gpu=[{"M": t} for t in GEMM_TOKENS], workloads=[{"M": t} for t in CPU_GEMM_TOKENS], tags=["kernel:gemm"],
        custom_inputs_entrypoint="make_inputs")


def gemm_fp8_rowwise(m, n: int, k: int, what: str) -> ProblemDraft:
    return problem(
        "FIB", m, f"{slug(m)}_gemm_fp8_rowwise_n{n}_k{k}", "gemm_fp8",
        f"{m.name} serving GEMM in FP8 with a per-token activation scale and a per-output-channel weight scale "
        f"(e4m3; vLLM / FBGEMM f8f8bf16_rowwise, the FP8-dynamic checkpoints): C = (A @ B^T) x A_scale x "
        f"B_scale^T, fp32 accumulation, bf16 output; {what}.",
        axes={"M": var("tokens in the batch"), "N": const(n, "out features"), "K": const(k, "in features"),
         "one": const(1, "scale column")},
        inputs={"A": tensor(["M", "K"], "float8_e4m3fn"), "A_scale": tensor(["M", "one"], "float32", "per token"),
         "B": tensor(["N", "K"], "float8_e4m3fn"), "B_scale": tensor(["N", "one"], "float32", "per output channel")},
        outputs={"C": tensor(["M", "N"], "bfloat16")}, reference=_GEMM_FP8,
        gpu=[{"M": t} for t in GEMM_TOKENS], workloads=[{"M": t} for t in CPU_GEMM_TOKENS], tags=["kernel:gemm_fp8"],
        custom_inputs_entrypoint="make_inputs")


# --- fused add + RMSNorm --------------------------------------------------------------------------------
_FUSED_ADD_RMSNORM = '''import torch

EPS = @EPS@


def make_inputs(axes, device):
    t, h = axes["batch_size"], axes["hidden_size"]
    return {"input": torch.randn(t, h, device=device).to(torch.bfloat16),
            "residual": torch.randn(t, h, device=device).to(torch.bfloat16),
            "weight": (1.0 + 0.1 * torch.randn(h, device=device)).to(torch.bfloat16)}


@torch.no_grad()
def run(input, residual, weight):
    """flashinfer.fused_add_rmsnorm(input, residual, weight, eps) updates both in place: residual <- input +
    residual (the fp32 sum rounded to the residual's dtype), input <- rmsnorm(the fp32 sum) * weight."""
    acc = torch.promote_types(input.dtype, torch.float32)
    x = input.to(acc) + residual.to(acc)
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * weight.to(acc)
    return normed.to(input.dtype), x.to(residual.dtype)
'''


def fused_add_rmsnorm(m) -> ProblemDraft:
    h, eps = m.config["hidden_size"], m.config["rms_norm_eps"]
    return problem(
        "FIB", m, f"{slug(m)}_fused_add_rmsnorm_h{h}", "rmsnorm",
        f"{m.name} pre-norm with the residual add fused (FlashInfer fused_add_rmsnorm, FlashInfer-Bench's "
        f"fused_add_rmsnorm_h* kind): hidden_size {h}, rms_norm_eps {eps}. The kernel works in place; here its "
        "two in-place results are the outputs: output (what lands in input) = RMSNorm(input + residual) x "
        "weight, normalised from the fp32 sum, and residual_out = input + residual rounded to bf16.",
        axes={"batch_size": var("tokens"), "hidden_size": const(h, "hidden_size")},
        inputs={"input": tensor(["batch_size", "hidden_size"], "bfloat16"),
         "residual": tensor(["batch_size", "hidden_size"], "bfloat16"), "weight": tensor(["hidden_size"], "bfloat16")},
        outputs={"output": tensor(["batch_size", "hidden_size"], "bfloat16"),
         "residual_out": tensor(["batch_size", "hidden_size"], "bfloat16")},
        reference=_FUSED_ADD_RMSNORM.replace("@EPS@", repr(eps)),
        gpu=[{"batch_size": t} for t in NORM_TOKENS], workloads=[{"batch_size": t} for t in CPU_NORM_TOKENS],
        tags=["kernel:fused_add_rmsnorm"], custom_inputs_entrypoint="make_inputs")


# --- MLA ragged prefill ----------------------------------------------------------------------------------
_MLA_PREFILL = '''import math
import torch

SM_SCALE = @SM_SCALE@
HEAD_CHUNK = 16  # heads per score block: bounds the reference's memory at long sequences


''' + SPLIT_OFFSETS + '''

def make_inputs(axes, device):
    b, tq, tkv = axes["batch_size"], axes["total_q"], axes["total_kv"]
    h, dqk, dv = axes["num_heads"], axes["head_dim_qk"], axes["head_dim_vo"]
    q_lens = _split(tq, b, 1)
    kv_lens = q_lens + _split(tkv - tq, b, 0)            # each sequence: a cached prefix, then its new tokens
    return {"q": torch.randn(tq, h, dqk, device=device).to(torch.bfloat16),
            "k": torch.randn(tkv, h, dqk, device=device).to(torch.bfloat16),
            "v": torch.randn(tkv, h, dv, device=device).to(torch.bfloat16),
            "qo_indptr": _offsets(q_lens).to(device), "kv_indptr": _offsets(kv_lens).to(device)}


@torch.no_grad()
def run(q, k, v, qo_indptr, kv_indptr):
    total_q, num_heads, _ = q.shape
    acc = torch.promote_types(q.dtype, torch.float32)
    output = torch.empty(total_q, num_heads, v.shape[-1], dtype=q.dtype, device=q.device)
    lse = torch.empty(total_q, num_heads, dtype=acc, device=q.device)
    for b in range(qo_indptr.shape[0] - 1):
        q0, q1 = int(qo_indptr[b]), int(qo_indptr[b + 1])
        k0, k1 = int(kv_indptr[b]), int(kv_indptr[b + 1])
        lq, lk = q1 - q0, k1 - k0
        # causal, aligned at the end: query i sits at position lk - lq + i and sees keys 0 .. lk - lq + i
        rows = torch.arange(lq, device=q.device)[:, None] + (lk - lq)
        masked = torch.arange(lk, device=q.device)[None, :] > rows
        for h0 in range(0, num_heads, HEAD_CHUNK):
            h1 = min(h0 + HEAD_CHUNK, num_heads)
            qb = q[q0:q1, h0:h1].to(acc).transpose(0, 1)                 # [H, lq, 192]
            kb = k[k0:k1, h0:h1].to(acc).transpose(0, 1)                 # [H, lk, 192]
            vb = v[k0:k1, h0:h1].to(acc).transpose(0, 1)                 # [H, lk, 128]
            scores = torch.matmul(qb, kb.transpose(1, 2)) * SM_SCALE
            scores = scores.masked_fill(masked, float("-inf"))
            lse[q0:q1, h0:h1] = (torch.logsumexp(scores, dim=-1) / math.log(2.0)).transpose(0, 1)
            probs = torch.softmax(scores, dim=-1).to(q.dtype).to(acc)    # P in bf16 for the PV MMA, as FlashInfer
            output[q0:q1, h0:h1] = torch.matmul(probs, vb).transpose(0, 1).to(q.dtype)
    return output, lse
'''


def mla_ragged_prefill(m) -> ProblemDraft:
    h, nope, rope, dv = (m.config[k] for k in ("num_attention_heads", "qk_nope_head_dim", "qk_rope_head_dim",
                                               "v_head_dim"))
    factor, mscale_all = m.config["rope_scaling.factor"], m.config["rope_scaling.mscale_all_dim"]
    mscale = 0.1 * mscale_all * math.log(factor) + 1.0
    scale = mscale * mscale / math.sqrt(nope + rope)
    gpu = [(1, 1024, 1024), (1, 2048, 2048), (1, 4096, 4096), (1, 8192, 8192), (2, 4096, 4096), (4, 2048, 2048),
           (8, 1024, 1024), (16, 512, 512), (32, 256, 256), (4, 4096, 4096), (2, 8192, 8192), (1, 1024, 8192),
           (1, 2048, 16384), (4, 1024, 16384), (8, 2048, 8192), (1, 16384, 16384)]
    cpu = [(1, 16, 16), (2, 40, 40), (1, 64, 64), (3, 90, 90), (2, 32, 80), (1, 128, 128), (4, 60, 120),
           (1, 24, 100)]
    keys = ("batch_size", "total_q", "total_kv")
    return problem(
        "FIB", m, f"{slug(m)}_mla_ragged_prefill_causal_h{h}_qk{nope + rope}_vo{dv}", "attention_mla",
        f"{m.name} multi-head latent attention prefill in the non-absorbed form (FlashInfer "
        f"BatchPrefillWithRaggedKVCacheWrapper, as SGLang / vLLM run MLA prefill): {h} heads "
        f"(num_attention_heads), q and k of qk_nope_head_dim {nope} + qk_rope_head_dim {rope} = {nope + rope} "
        f"(k already up-projected from the kv_lora_rank 512 latent, its rope part shared), v of v_head_dim {dv}. "
        "Sequences are packed (qo_indptr, kv_indptr); each may have a cached prefix (kv longer than q), and the "
        "causal mask is aligned at the end. sm_scale = mscale^2 / sqrt(192) with the YaRN mscale = 0.1 x "
        "mscale_all_dim x ln(rope_scaling.factor) + 1. Returns the output and the base-2 log-sum-exp.",
        axes={"batch_size": var("sequences"), "total_q": var("new tokens (qo_indptr[-1])"),
         "total_kv": var("keys incl. cached prefixes (kv_indptr[-1])"), "num_heads": const(h, "num_attention_heads"),
         "head_dim_qk": const(nope + rope, "qk_nope_head_dim + qk_rope_head_dim"),
         "head_dim_vo": const(dv, "v_head_dim"), "len_indptr": {"type": "expr", "expression": "batch_size + 1"}},
        inputs={"q": tensor(["total_q", "num_heads", "head_dim_qk"], "bfloat16"),
         "k": tensor(["total_kv", "num_heads", "head_dim_qk"], "bfloat16"),
         "v": tensor(["total_kv", "num_heads", "head_dim_vo"], "bfloat16"),
         "qo_indptr": tensor(["len_indptr"], "int32"), "kv_indptr": tensor(["len_indptr"], "int32")},
        outputs={"output": tensor(["total_q", "num_heads", "head_dim_vo"], "bfloat16"),
         "lse": tensor(["total_q", "num_heads"], "float32", "log2-sum-exp of the scaled logits")},
        reference=_MLA_PREFILL.replace("@SM_SCALE@", repr(scale)),
        gpu=[dict(zip(keys, r)) for r in gpu], workloads=[dict(zip(keys, r)) for r in cpu],
        tags=["family:mla", "family:attention", "kernel:mla_prefill"],
        constraints=["total_q == qo_indptr[-1].item()", "total_kv == kv_indptr[-1].item()", "total_kv >= total_q"],
        custom_inputs_entrypoint="make_inputs")


# --- FP8 block-scale MoE (DeepSeek-V3 routing) --------------------------------------------------------------
_FP8_MOE = '''import torch

TOP_K, N_GROUP, TOPK_GROUP, BLOCK = @TOP_K@, @N_GROUP@, @TOPK_GROUP@, 128


def _fp8_codes(shape, device):
    """Random e4m3 values without NaN: sign and magnitude codes 0x28..0x4f (0.25 .. 7.5)."""
    codes = torch.randint(0x28, 0x50, shape, dtype=torch.uint8, device=device)
    signs = torch.randint(0, 2, shape, dtype=torch.uint8, device=device) << 7
    return (codes | signs).view(torch.float8_e4m3fn)


def make_inputs(axes, device):
    t, e, local = axes["seq_len"], axes["num_experts"], axes["num_local_experts"]
    h, i = axes["hidden_size"], axes["intermediate_size"]
    # Tie-free routing: a random preference order per token (this rank's experts 4x likelier near the top),
    # scores on a ladder by rank (below), plus a per-group offset (multiples of 6e-5) that separates group sums.
    # The groups routing keeps are chosen first (this rank's group and TOPK_GROUP - 1 others): every expert of a
    # dropped group ranks below every expert of a kept one, so the top-k cut is the ladder's cut.
    size = e // N_GROUP
    key = torch.rand(t, e, device=device)
    key[:, :local] *= 0.25
    dropped = torch.zeros(t, N_GROUP, dtype=torch.bool, device=device)
    others = torch.rand(t, N_GROUP - 1, device=device).argsort(dim=1)[:, :N_GROUP - TOPK_GROUP] + 1
    dropped.scatter_(1, others, True)
    key = key + 10.0 * dropped.repeat_interleave(size, dim=1)
    # one of this rank's experts and another of its group lead the order (that group is kept, the rank is busy)
    rows = torch.arange(t, device=device)
    hot = torch.randint(0, local, (t,), device=device)
    partner = (hot // size) * size + (hot % size + 1 + torch.randint(0, size - 1, (t,), device=device)) % size
    key[rows, hot] = -2.0
    key[rows, partner] = -1.0
    rank = torch.argsort(torch.argsort(key, dim=1), dim=1)
    # the local expert moves to a random place among the top-k (so its weight, and the output, follow the logits),
    # for a third of the tokens the last place, for a third the first place below the cut (the bias decides them)
    u = torch.rand(t, device=device)
    moved = torch.where(u < 1 / 3, TOP_K, torch.where(u < 2 / 3, TOP_K - 1, torch.randint(0, TOP_K, (t,), device=device)))
    holder = (rank == moved[:, None]).to(torch.int64).argmax(dim=1)
    rank[rows, holder] = rank[rows, hot]
    rank[rows, hot] = moved
    rank = rank.to(torch.float32)
    group_rank = torch.argsort(torch.rand(t, N_GROUP, device=device), dim=1).to(torch.float32)
    # selection scores by rank, all multiples of 1e-3: 0.08 apart within the top-k (so the weights differ), 0.002
    # across the cut (a redrawn routing_bias moves some tokens' last choice out), 1e-3 apart below; group
    # offsets of 6e-5 per group rank keep every group sum at least 1.2e-4 from another
    ladder = torch.where(rank < TOP_K, 0.9 - 0.08 * rank, 0.338 - 1e-3 * (rank - TOP_K))
    choice = ladder + 6e-5 * group_rank.repeat_interleave(e // N_GROUP, dim=1)
    bias = (0.01 * torch.randn(e, device=device)).to(torch.bfloat16)
    s = choice - bias.to(torch.float32)
    logits = torch.log(s / (1.0 - s))
    return {"routing_logits": logits, "routing_bias": bias,
            "hidden_states": _fp8_codes((t, h), device),
            "hidden_states_scale": (0.3 + 0.1 * torch.rand(h // BLOCK, t, device=device)),
            "gemm1_weights": _fp8_codes((local, 2 * i, h), device),
            "gemm1_weights_scale": (0.3 + 0.1 * torch.rand(local, 2 * i // BLOCK, h // BLOCK, device=device)) * h ** -0.5,
            "gemm2_weights": _fp8_codes((local, h, i), device),
            "gemm2_weights_scale": (0.3 + 0.1 * torch.rand(local, h // BLOCK, i // BLOCK, device=device)) * i ** -0.5}


def _blocks(w, scale):
    """e4m3 [E, N, K] with 128x128-block scales [E, N/128, K/128] -> fp32."""
    e, n, k = w.shape
    values = w.to(torch.float32).reshape(e, n // BLOCK, BLOCK, k // BLOCK, BLOCK) * scale.to(torch.float32)[:, :, None, :, None]
    return values.reshape(e, n, k)


@torch.no_grad()
def run(routing_logits, routing_bias, hidden_states, hidden_states_scale, gemm1_weights, gemm1_weights_scale,
        gemm2_weights, gemm2_weights_scale, local_expert_offset, routed_scaling_factor):
    t, h = hidden_states.shape
    local, two_i, _ = gemm1_weights.shape
    i = two_i // 2
    e = routing_logits.shape[1]
    # hidden states: e4m3 with 1x128 block scales stored [H/128, T]
    a = (hidden_states.to(torch.float32).reshape(t, h // BLOCK, BLOCK)
         * hidden_states_scale.to(torch.float32).T[:, :, None]).reshape(t, h)
    # DeepSeek-V3 noaux_tc routing
    s = torch.sigmoid(routing_logits.to(torch.float32))
    biased = s + routing_bias.to(torch.float32)
    group_scores = torch.topk(biased.view(t, N_GROUP, e // N_GROUP), k=2, dim=2).values.sum(dim=2)
    group_idx = torch.topk(group_scores, k=TOPK_GROUP, dim=1).indices
    group_mask = torch.zeros_like(group_scores).scatter_(1, group_idx, 1.0)
    keep = group_mask.repeat_interleave(e // N_GROUP, dim=1) > 0
    topk_idx = torch.topk(biased.masked_fill(~keep, float("-inf")), k=TOP_K, dim=1).indices
    weights = torch.gather(s, 1, topk_idx)
    weights = weights / weights.sum(dim=1, keepdim=True) * routed_scaling_factor
    # this rank's experts
    start = int(local_expert_offset)
    token, slot = torch.nonzero((topk_idx >= start) & (topk_idx < start + local), as_tuple=True)
    expert = topk_idx[token, slot] - start
    w13 = _blocks(gemm1_weights, gemm1_weights_scale)
    w2 = _blocks(gemm2_weights, gemm2_weights_scale)
    output = torch.zeros(t, h, dtype=torch.float32, device=hidden_states.device)
    for le in range(local):
        rows = torch.nonzero(expert == le).flatten()
        if rows.numel() == 0:
            continue
        g1 = a[token[rows]] @ w13[le].T                       # [rows, 2I]: [up | gate], as trtllm orders W13
        c = torch.nn.functional.silu(g1[:, i:]) * g1[:, :i]
        o = c @ w2[le].T
        output.index_add_(0, token[rows], o * weights[token[rows], slot[rows]].unsqueeze(1))
    return output.to(torch.bfloat16)
'''


def fp8_block_moe(m) -> ProblemDraft:
    c = m.config
    h, i, e, k = c["hidden_size"], c["moe_intermediate_size"], c["num_experts"], c["num_experts_per_tok"]
    g, tg, rsf = c["n_group"], c["topk_group"], c["routed_scaling_factor"]
    gpu = [(1, 32), (4, 32), (16, 32), (64, 32), (256, 32), (1024, 32), (4096, 32), (16384, 32), (8, 8), (512, 8),
           (8192, 8), (32, 16), (2048, 16), (128, 64), (2048, 64), (8192, 64)]
    cpu = [(12, 1), (16, 1), (40, 1), (100, 1), (20, 2), (24, 2), (64, 2), (77, 2)]
    reference = (_FP8_MOE.replace("@TOP_K@", str(k)).replace("@N_GROUP@", str(g))
                 .replace("@TOPK_GROUP@", str(tg)))
    return problem(
        "FIB", m, f"{slug(m)}_moe_fp8_block_scale_ds_routing_topk{k}_ng{g}_kg{tg}_e{e}_h{h}_i{i}", "moe_fp8",
        f"{m.name} MoE layer on one expert-parallel rank as FlashInfer's trtllm_fp8_block_scale_moe (FlashInfer-"
        f"Bench moe_fp8_block_scale_ds_routing): noaux_tc routing (scoring_func sigmoid, + routing_bias for the "
        f"choice, n_group {g} groups ranked by their top-2 sum, topk_group {tg} kept, top num_experts_per_tok {k} of "
        f"num_experts {e}; weights from the unbiased scores, normalised, x routed_scaling_factor {rsf}); then, for "
        f"this rank's num_local_experts experts from local_expert_offset, GEMM1 (hidden_size {h} -> 2 x "
        f"moe_intermediate_size {i}, W13 = [up | gate]), SwiGLU, GEMM2, summed per token by routing weight. "
        "Weights e4m3 with 128x128 block scales (published weight_block_size), activations e4m3 with 1x128 "
        "scales stored [H/128, T]; dequantised and computed in fp32, bf16 output. The generated logits "
        "keep every routing decision at least 1.2e-4 from a tie; each token routes to one of this rank's experts "
        "at a random place among its top 8 (for a third of the tokens the last, for a third the first below the "
        "cut, so the bias decides), and its other experts are 4x likelier picks.",
        axes={"seq_len": var("tokens"), "num_experts": const(e, "num_experts"),
         "num_local_experts": var("experts on this rank: num_experts / EP"),
         "hidden_size": const(h, "hidden_size"), "intermediate_size": const(i, "moe_intermediate_size"),
         "gemm1_out_size": {"type": "expr", "expression": "2 * intermediate_size"},
         "num_hidden_blocks": {"type": "expr", "expression": "hidden_size // 128"},
         "num_intermediate_blocks": {"type": "expr", "expression": "intermediate_size // 128"},
         "num_gemm1_out_blocks": {"type": "expr", "expression": "gemm1_out_size // 128"}},
        inputs={"routing_logits": tensor(["seq_len", "num_experts"], "float32"),
         "routing_bias": tensor(["num_experts"], "bfloat16", "e_score_correction_bias"),
         "hidden_states": tensor(["seq_len", "hidden_size"], "float8_e4m3fn"),
         "hidden_states_scale": tensor(["num_hidden_blocks", "seq_len"], "float32"),
         "gemm1_weights": tensor(["num_local_experts", "gemm1_out_size", "hidden_size"], "float8_e4m3fn"),
         "gemm1_weights_scale": tensor(["num_local_experts", "num_gemm1_out_blocks", "num_hidden_blocks"], "float32"),
         "gemm2_weights": tensor(["num_local_experts", "hidden_size", "intermediate_size"], "float8_e4m3fn"),
         "gemm2_weights_scale": tensor(["num_local_experts", "num_hidden_blocks", "num_intermediate_blocks"], "float32"),
         "local_expert_offset": tensor(None, "int32"), "routed_scaling_factor": tensor(None, "float32")},
        outputs={"output": tensor(["seq_len", "hidden_size"], "bfloat16")}, reference=reference,
        gpu=[{"seq_len": t, "num_local_experts": n} for t, n in gpu],
        workloads=[{"seq_len": t, "num_local_experts": n} for t, n in cpu],
        tags=["family:moe", "kernel:moe_fp8_block_scale"], constraints=[f"num_local_experts <= {e}"],
        scalars={"local_expert_offset": 0, "routed_scaling_factor": rsf}, custom_inputs_entrypoint="make_inputs")


def drafts() -> list[ProblemDraft]:
    return [
        gemm_bf16(LLAMA_70B, 8192, 1024, "o_proj of a tensor-parallel TP=8 shard, num_attention_heads 64 / 8 x "
                                         "head_dim 128 = 1024 -> hidden_size 8192"),
        gemm_fp8_rowwise(LLAMA_70B, 1280, 8192, "fused qkv_proj of a TP=8 shard, hidden_size 8192 -> (64 + 2 x 8) "
                                                "heads / 8 x head_dim 128 = 1280"),
        fused_add_rmsnorm(DSV3),
        mla_ragged_prefill(DSV3_MLA),
        fp8_block_moe(DSV3_MOE),
    ]
