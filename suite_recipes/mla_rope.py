"""Multi-head latent attention cores and rotary-embedding kernels the other recipes do not cover.

Each follows the model's code in transformers:

- Kimi-K2 and DeepSeek-V2-Lite (``modeling_deepseek_v3.py`` / ``modeling_deepseek_v2.py``,
  ``DeepseekV3Attention.forward``): k_nope and v come from the normalised latent ``compressed_kv`` through
  ``kv_b_proj``, k_pe is shared by every head, and the softmax scale is ``q_head_dim ** -0.5`` times
  ``yarn_get_mscale(factor, mscale_all_dim) ** 2`` (0.1 * mscale_all_dim * ln(factor) + 1, squared).
  The decode problem is the weight-absorbed form serving engines run (q_nope through W_UK into the latent
  space, attention over the latent cache, W_UV after), the same function as the module's.
- Qwen3-32B (``modeling_qwen3.py``, ``Qwen3Attention.forward``): per-head RMSNorm of q and k, then RoPE at
  each token's position (rope_theta 1e6).
- Phi-3.5-mini (``modeling_rope_utils._compute_longrope_parameters`` and ``Phi3Attention.forward``): the fused
  qkv projection's output split into heads, LongRoPE with the long factors past
  original_max_position_embeddings (4,096) and the short ones below, cos/sin scaled by
  sqrt(1 + ln(max_position_embeddings / 4096) / ln(4096)).

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads, ``workload.cpu.jsonl`` 8 small ones.
"""

from __future__ import annotations

import math

from suite_recipes.shapes import grid
from suite_recipes.l2 import body, draft
from suite_recipes.models import model
from suite_recipes.sweeps import tiered
from solbench.suite.draft import ProblemDraft

KIMI_K2 = model("Kimi-K2-Instruct", "moonshotai/Kimi-K2-Instruct", "language",
                {"num_attention_heads": 64, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                 "v_head_dim": 128, "rope_scaling.factor": 32.0, "rope_scaling.mscale_all_dim": 1.0})
DEEPSEEK_V2_LITE = model("DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V2-Lite", "language",
                         {"num_attention_heads": 16, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
                          "qk_rope_head_dim": 64, "v_head_dim": 128, "rope_scaling.factor": 40,
                          "rope_scaling.mscale_all_dim": 0.707})
QWEN3_32B = model("Qwen3-32B", "Qwen/Qwen3-32B", "language",
                  {"num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "rope_theta": 1000000,
                   "rms_norm_eps": 1e-06})
PHI35_MINI = model("Phi-3.5-mini-instruct", "microsoft/Phi-3.5-mini-instruct", "language",
                   {"num_attention_heads": 32, "derived.head_dim": 96, "rope_theta": 10000.0,
                    "original_max_position_embeddings": 4096, "max_position_embeddings": 131072})




def _yarn_softmax_scale(m) -> float:
    q_head_dim = m.config["qk_nope_head_dim"] + m.config["qk_rope_head_dim"]
    factor, mscale_all_dim = m.config["rope_scaling.factor"], m.config["rope_scaling.mscale_all_dim"]
    mscale = 0.1 * mscale_all_dim * math.log(factor) + 1.0 if factor > 1 else 1.0
    return q_head_dim ** -0.5 * mscale * mscale


# --- MLA prefill attention (Kimi-K2) --------------------------------------------------------------------------

_MLA_PREFILL = '''@torch.no_grad()
def run(query, compressed_kv, k_pe, kv_b_proj):
    b, s, heads, _ = query.shape
    k_nope, value = F.linear(compressed_kv, kv_b_proj).view(b, s, heads, @NOPE@ + @VDIM@).split([@NOPE@, @VDIM@], -1)
    key = torch.cat((k_nope, k_pe[:, :, None].expand(b, s, heads, @ROPE@)), dim=-1)
    o = F.scaled_dot_product_attention(query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2),
                                       is_causal=True, scale=@SCALE@)
    return o.transpose(1, 2).reshape(b, s, heads * @VDIM@)
'''


def mla_prefill(m) -> ProblemDraft:
    heads, rank = m.config["num_attention_heads"], m.config["kv_lora_rank"]
    nope, rope, vdim = m.config["qk_nope_head_dim"], m.config["qk_rope_head_dim"], m.config["v_head_dim"]
    scale = _yarn_softmax_scale(m)
    d = draft(
        m, f"{m.name}_mla_prefill_attention_h{heads}_r{rank}", "mla_prefill",
        f"{m.name} multi-head latent attention for prefill: k_nope and v from kv_b_proj of the normalised latent "
        f"compressed_kv (kv_lora_rank {rank}), the rotated k_pe ({rope}) shared by all {heads} heads, causal "
        f"attention over q = [q_nope ({nope}), q_pe ({rope})] with softmax scale {scale:.6g} (q_head_dim^-0.5 x "
        f"yarn mscale^2, rope_scaling factor {m.config['rope_scaling.factor']}, mscale_all_dim "
        f"{m.config['rope_scaling.mscale_all_dim']}), v_head_dim {vdim}. q and k_pe come already rotated (the "
        "projections problem makes them). Returns the heads' outputs concatenated, before o_proj.",
        {"batch_size": (None, "sequences"), "seq_len": (None, "prompt length"), "num_heads": (heads, "num_attention_heads"),
         "q_head_dim": (nope + rope, "qk_nope_head_dim + qk_rope_head_dim"), "kv_lora_rank": (rank, "kv_lora_rank"),
         "rope_dim": (rope, "qk_rope_head_dim"), "kv_b_dim": (heads * (nope + vdim), "heads x (nope + v_head_dim)"),
         "out_dim": (heads * vdim, "heads x v_head_dim")},
        {"query": (["batch_size", "seq_len", "num_heads", "q_head_dim"], "bfloat16", 1.0),
         "compressed_kv": (["batch_size", "seq_len", "kv_lora_rank"], "bfloat16", 1.0),
         "k_pe": (["batch_size", "seq_len", "rope_dim"], "bfloat16", 1.0),
         "kv_b_proj": (["kv_b_dim", "kv_lora_rank"], "bfloat16", rank ** -0.5)},
        {"output": (["batch_size", "seq_len", "out_dim"], "bfloat16")},
        body(_MLA_PREFILL), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), seq_len=(8, 16, 24, 33, 64, 48, 100, 128)),
        subs={"NOPE": nope, "ROPE": rope, "VDIM": vdim, "SCALE": scale})
    gpu = grid(batch_size=(1, 1, 1, 2, 1, 4, 1, 2, 1, 8, 1, 2, 4, 1, 2, 1),
               seq_len=(512, 1000, 1024, 1024, 2048, 1024, 3000, 2048, 4096, 1024, 6144, 4096, 2560, 8192, 6000, 16384))
    return tiered(d, gpu, extra_tags=["family:mla", "family:attention"])


# --- MLA weight-absorbed decode over a latent cache (DeepSeek-V2-Lite) -------------------------------------------

_MLA_DECODE = '''@torch.no_grad()
def run(q_nope, q_pe, ckv_cache, kpe_cache, kv_b_proj):
    heads = q_nope.shape[1]
    w = kv_b_proj.view(heads, @NOPE@ + @VDIM@, @RANK@)
    w_uk, w_uv = w[:, :@NOPE@].float(), w[:, @NOPE@:].float()
    q_latent = torch.einsum("bhn,hnr->bhr", q_nope.float(), w_uk)
    ckv, kpe = ckv_cache.float(), kpe_cache.float()
    scores = torch.einsum("bhr,btr->bht", q_latent, ckv) + torch.einsum("bhp,btp->bht", q_pe.float(), kpe)
    probs = (scores * @SCALE@).softmax(dim=-1)
    o_latent = torch.einsum("bht,btr->bhr", probs, ckv)
    return torch.einsum("bhr,hvr->bhv", o_latent, w_uv).to(q_nope.dtype).flatten(1)
'''


def mla_absorbed_decode(m) -> ProblemDraft:
    heads, rank = m.config["num_attention_heads"], m.config["kv_lora_rank"]
    nope, rope, vdim = m.config["qk_nope_head_dim"], m.config["qk_rope_head_dim"], m.config["v_head_dim"]
    scale = _yarn_softmax_scale(m)
    d = draft(
        m, f"{m.name}_mla_absorbed_decode_h{heads}_r{rank}", "mla_decode",
        f"{m.name} multi-head latent attention for one decode step per sequence, in the weight-absorbed form: "
        f"q_nope ({nope}) goes through each head's W_UK slice of kv_b_proj into the latent space (kv_lora_rank "
        f"{rank}), scores against the contiguous latent cache plus q_pe . k_pe ({rope}), softmax scale {scale:.6g} "
        f"(q_head_dim^-0.5 x yarn mscale^2), the probabilities weight the latent cache, and each head's W_UV "
        f"slice maps the result to v_head_dim {vdim}. {heads} heads. Returns the heads' outputs concatenated.",
        {"batch_size": (None, "sequences decoding"), "context_len": (None, "cached positions per sequence"),
         "num_heads": (heads, "num_attention_heads"), "nope_dim": (nope, "qk_nope_head_dim"),
         "rope_dim": (rope, "qk_rope_head_dim"), "kv_lora_rank": (rank, "kv_lora_rank"),
         "kv_b_dim": (heads * (nope + vdim), "heads x (nope + v_head_dim)"), "out_dim": (heads * vdim, "heads x v")},
        {"q_nope": (["batch_size", "num_heads", "nope_dim"], "bfloat16", 1.0),
         "q_pe": (["batch_size", "num_heads", "rope_dim"], "bfloat16", 1.0),
         "ckv_cache": (["batch_size", "context_len", "kv_lora_rank"], "bfloat16", 1.0),
         "kpe_cache": (["batch_size", "context_len", "rope_dim"], "bfloat16", 1.0),
         "kv_b_proj": (["kv_b_dim", "kv_lora_rank"], "bfloat16", rank ** -0.5)},
        {"output": (["batch_size", "out_dim"], "bfloat16")},
        body(_MLA_DECODE), grid(batch_size=(1, 1, 2, 4, 3, 8, 16, 32), context_len=(16, 100, 64, 128, 255, 256, 512, 200)),
        subs={"NOPE": nope, "VDIM": vdim, "RANK": rank, "SCALE": scale})
    gpu = grid(batch_size=(1, 1, 4, 8, 16, 1, 32, 64, 16, 128, 64, 256, 32, 128, 512, 64),
               context_len=(1024, 4096, 2048, 1000, 1024, 16384, 2048, 1024, 8192, 2048, 4096, 1024, 16384, 4096,
                            2048, 32768))
    return tiered(d, gpu, extra_tags=["family:mla", "family:attention"])


# --- Qwen3 q/k RMSNorm + RoPE at token positions -----------------------------------------------------------------

_QK_NORM_ROPE = '''@torch.no_grad()
def run(query, key, q_norm, k_norm, positions):
    t = query.shape[0]
    q = _rmsnorm(query.view(t, -1, @D@), q_norm, @EPS@)
    k = _rmsnorm(key.view(t, -1, @D@), k_norm, @EPS@)
    inv_freq = 1.0 / (@THETA@ ** (torch.arange(0, @D@, 2, device=query.device, dtype=torch.float64) / @D@))
    freqs = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None].to(query.dtype), emb.sin()[:, None].to(query.dtype)
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
'''


def qk_norm_rope(m) -> ProblemDraft:
    heads, kv_heads, dim = m.config["num_attention_heads"], m.config["num_key_value_heads"], m.config["head_dim"]
    d = draft(
        m, f"{m.name}_qk_norm_rope_h{heads}_kv{kv_heads}_d{dim}", "qk_norm_rope",
        f"{m.name} attention input preparation: the q ({heads} heads) and k ({kv_heads} heads) projections' outputs "
        f"split into heads of head_dim {dim}, each head RMSNorm-ed (rms_norm_eps {m.config['rms_norm_eps']}) with "
        f"q_norm / k_norm, then rotated (rotate-half RoPE, rope_theta {m.config['rope_theta']}) at each token's "
        "position (a batch of sequences flattened, positions up to 32k).",
        {"num_tokens": (None, "tokens in the batch"), "q_dim": (heads * dim, "heads x head_dim"),
         "kv_dim": (kv_heads * dim, "kv heads x head_dim"), "head_dim": (dim, "head_dim"),
         "num_heads": (heads, "num_attention_heads"), "num_kv_heads": (kv_heads, "num_key_value_heads")},
        {"query": (["num_tokens", "q_dim"], "bfloat16", 1.0), "key": (["num_tokens", "kv_dim"], "bfloat16", 1.0),
         "q_norm": (["head_dim"], "bfloat16", 0.1, 1.0), "k_norm": (["head_dim"], "bfloat16", 0.1, 1.0),
         "positions": (["num_tokens"], "int64", "torch.randint(0, 32768, shape, device=device)")},
        {"query_out": (["num_tokens", "num_heads", "head_dim"], "bfloat16"),
         "key_out": (["num_tokens", "num_kv_heads", "head_dim"], "bfloat16")},
        body(_QK_NORM_ROPE), [{"num_tokens": t} for t in (1, 7, 32, 128, 255, 512, 1000, 2048)],
        subs={"D": dim, "EPS": m.config["rms_norm_eps"], "THETA": float(m.config["rope_theta"])})
    gpu = [{"num_tokens": t} for t in (16, 64, 256, 1024, 2000, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 40960,
                                       49152, 57344, 65536)]
    return tiered(d, gpu, extra_tags=["family:rope_kv"])


# --- Phi-3.5 fused qkv split + LongRoPE ---------------------------------------------------------------------------

_LONGROPE = '''@torch.no_grad()
def run(qkv, ext_factors):
    b, s, _ = qkv.shape
    q, k, v = qkv.view(b, s, 3, @HEADS@, @D@).permute(2, 0, 3, 1, 4).unbind(0)
    inv_freq = 1.0 / (ext_factors.to(torch.float64) * @THETA@ ** (torch.arange(0, @D@, 2, device=qkv.device, dtype=torch.float64) / @D@))
    freqs = torch.arange(s, device=qkv.device, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = (emb.cos() * @ATTN_FACTOR@).to(qkv.dtype), (emb.sin() * @ATTN_FACTOR@).to(qkv.dtype)
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin, v.contiguous()
'''


def longrope_qkv(m) -> ProblemDraft:
    heads, dim = m.config["num_attention_heads"], m.config["derived.head_dim"]
    original, longest = m.config["original_max_position_embeddings"], m.config["max_position_embeddings"]
    attention_factor = math.sqrt(1 + math.log(longest / original) / math.log(original))
    factor_init = "1.0 + torch.rand(shape, device=device) * torch.linspace(0.0, 40.0, shape[0], device=device)"
    d = draft(
        m, f"{m.name}_qkv_longrope_h{heads}_d{dim}", "rope",
        f"{m.name} attention input preparation for prefill: the fused qkv_proj output split into q, k and v "
        f"({heads} heads of {dim}), q and k rotated with LongRoPE (rope_theta {m.config['rope_theta']}): per-frequency "
        f"rescale factors ext_factors (the model passes its long_factor for sequences longer than "
        f"original_max_position_embeddings {original}, its short_factor otherwise: 48 values each, rising from 1), "
        f"cos/sin scaled by sqrt(1 + ln({longest}/{original}) / ln({original})) = {attention_factor:.6f}.",
        {"batch_size": (None, "sequences"), "seq_len": (None, "prompt length"), "qkv_dim": (3 * heads * dim, "3 x heads x head_dim"),
         "num_heads": (heads, "num_attention_heads"), "head_dim": (dim, "head_dim"),
         "half_dim": (dim // 2, "head_dim / 2 (one factor per frequency)")},
        {"qkv": (["batch_size", "seq_len", "qkv_dim"], "bfloat16", 1.0),
         "ext_factors": (["half_dim"], "float32", factor_init)},
        {"query": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16"),
         "key": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16"),
         "value": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16")},
        body(_LONGROPE), grid(batch_size=(1, 1, 2, 1, 4, 1, 1, 2), seq_len=(16, 64, 100, 255, 128, 512, 4097, 200)),
        subs={"HEADS": heads, "D": dim, "THETA": float(m.config["rope_theta"]),
              "ATTN_FACTOR": attention_factor})
    gpu = grid(batch_size=(1, 4, 1, 8, 2, 1, 16, 4, 1, 2, 1, 8, 1, 2, 1, 1),
               seq_len=(1024, 512, 4096, 1024, 4096, 4100, 1024, 4096, 8192, 8192, 16384, 4096, 32768, 16384, 65536,
                        131072))
    return tiered(d, gpu, extra_tags=["family:rope_kv"])


def drafts() -> list[ProblemDraft]:
    return [mla_prefill(KIMI_K2), mla_absorbed_decode(DEEPSEEK_V2_LITE), qk_norm_rope(QWEN3_32B), longrope_qkv(PHI35_MINI)]
