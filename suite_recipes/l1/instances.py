"""Every generated L1 problem: each op family instantiated for the real models it occurs in.

Two tiers (docs/tiers.md): the recipe functions make the CPU tier (small workloads, each well under a
second on a 2-core CPU); `_gpu` adds the GPU tier (workload.jsonl) from the shared sweeps of
`suite_recipes/sweeps.py`, chosen by what the axis means: training/prefill tokens (1k-64k), decode rows,
native image token counts (197/257/577/1025/1370 per image), Whisper's 1,500 frames (3,000 mel frames)
per 30 s clip, video latents at the model's native frames and resolutions.
"""

from __future__ import annotations

from solbench.suite.draft import ProblemDraft
from suite_recipes import sweeps as sw
from suite_recipes.l1 import backward as bw
from suite_recipes.l1 import elementwise as ew
from suite_recipes.l1 import matmul as mm
from suite_recipes.l1 import norms
from suite_recipes.l1.models import (
    DEEPSEEK_V3,
    DINOV2_L14,
    GEMMA2_9B,
    LLAMA_31_8B,
    LLAMA_31_70B,
    LLAMA_32_1B,
    QWEN3_8B,
    QWEN25_05B,
    QWEN25_7B,
    VIT_B16,
    WHISPER_LARGE_V3,
)
from suite_recipes.shapes import tokens
from suite_recipes.sweeps import image_tokens

TOKENS = sw.per("num_tokens", sw.TRAIN_TOKENS)
"""Training / prefill tokens, 1 to 64k, odd sizes mixed in."""


def _gpu(draft: ProblemDraft, workloads, **options) -> ProblemDraft:
    """The draft with `workloads` as its GPU tier and its recipe workloads as the CPU tier (`options`: how a
    CPU workload the GPU tier also has is moved, `sweeps.tiered`)."""
    return sw.tiered(draft, workloads, **options)


def _seqs(pairs) -> list[dict[str, int]]:
    return sw.pairs("batch_size", "seq_len", pairs)


def _norms() -> list[ProblemDraft]:
    return [
        _gpu(norms.rmsnorm(LLAMA_31_8B), TOKENS),
        _gpu(norms.rmsnorm(DEEPSEEK_V3), TOKENS),
        _gpu(norms.rmsnorm(GEMMA2_9B, gemma=True), TOKENS),
        _gpu(
            norms.layernorm(
                VIT_B16,
                hidden_key="hidden_size",
                eps=1e-12,
                eps_source="layer_norm_eps",
                dtype="float32",
                dtype_source="torch_dtype",
                sequence="197 tokens per 224 px image, 577 at 384 px (patches + CLS)",
                workloads=[(1, 197), (2, 197), (8, 197), (16, 197), (32, 197), (64, 197), (1, 577), (8, 577)],
            ),
            _seqs(image_tokens((197, 577))),
        ),
        _gpu(
            norms.layernorm(
                DINOV2_L14,
                hidden_key="hidden_size",
                eps=1e-6,
                eps_source="layer_norm_eps",
                dtype="float32",
                dtype_source="fp32 inference",
                sequence="patches + CLS: 257 at 224 px, 1025 at 448 px, 1370 at 518 px (image_size)",
                workloads=[(1, 257), (8, 257), (32, 257), (1, 1025), (4, 1025), (1, 1370), (3, 1370), (8, 1370)],
            ),
            _seqs(image_tokens((257, 1025, 1370))),
        ),
        _gpu(
            norms.layernorm(
                WHISPER_LARGE_V3,
                hidden_key="d_model",
                eps=1e-5,
                eps_source="nn.LayerNorm default",
                dtype="float16",
                dtype_source="fp16 inference, openai-whisper's default",
                sequence="1500 encoder frames per 30 s clip (max_source_positions) or decoder tokens",
                workloads=[(1, 1500), (2, 1500), (4, 1500), (8, 1500), (16, 1500), (1, 448), (5, 1), (32, 1)],
            ),
            _seqs((c, sw.WHISPER_FRAMES_PER_CLIP) for c in sw.CLIPS),
        ),
    ]


def _elementwise() -> list[ProblemDraft]:
    return [
        _gpu(ew.gated_activation(QWEN3_8B, tokens=ew.CAPPED_TOKENS), TOKENS),
        _gpu(ew.gated_activation(LLAMA_31_70B, tp=8), TOKENS),
        _gpu(ew.gated_activation(GEMMA2_9B, tokens=ew.CAPPED_TOKENS), TOKENS),
    ]


def _matmul() -> list[ProblemDraft]:
    head_dim = 128
    drafts = [
        mm.linear(
            LLAMA_31_8B,
            what="qkv_proj (fused q, k, v projections)",
            keys=("hidden_size", "num_attention_heads", "num_key_value_heads", "derived.head_dim", "attention_bias"),
            in_features=4096,
            out_features=(32 + 2 * 8) * head_dim,
            formula="(num_attention_heads + 2 num_key_value_heads) x head_dim = 6144",
            bias=False,
            dtype="bfloat16",
            dtype_source="torch_dtype",
        ),
        mm.linear(
            QWEN25_7B,
            what="down_proj (MLP output projection, row-parallel shard at tensor parallelism 4: "
            "intermediate_size 18944 / 4 = 4736 in_features)",
            keys=("hidden_size", "intermediate_size"),
            in_features=18944 // 4,
            out_features=3584,
            formula="hidden_size 3584",
            bias=False,
            dtype="bfloat16",
            dtype_source="bf16 inference",
        ),
        mm.linear(
            DEEPSEEK_V3,
            what="fused_qkv_a_proj (MLA q_a and kv_a projections)",
            keys=("hidden_size", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim"),
            in_features=7168,
            out_features=1536 + 512 + 64,
            formula="q_lora_rank + kv_lora_rank + qk_rope_head_dim = 2112",
            bias=False,
            dtype="bfloat16",
            dtype_source="torch_dtype",
        ),
        mm.linear(
            VIT_B16,
            what="qkv (fused attention input projection)",
            keys=("hidden_size", "qkv_bias"),
            in_features=768,
            out_features=3 * 768,
            formula="3 x hidden_size = 2304",
            bias=True,
            dtype="float32",
            dtype_source="torch_dtype",
            rows="images x 197 tokens (224 px, patch 16, CLS)",
            tokens=tuple(b * 197 for b in (1, 2, 4, 8, 16, 24, 32, 40)),
        ),
    ]
    images = tokens(sorted(b * t for b, t in image_tokens((197, 577))))
    gpu = [TOKENS, TOKENS, TOKENS, images]
    return [_gpu(d, g) for d, g in zip(drafts, gpu, strict=True)]


def _backward() -> list[ProblemDraft]:
    drafts = [
        bw.rmsnorm_backward(LLAMA_31_8B),
        bw.rmsnorm_backward(QWEN25_7B),
        bw.linear_backward(
            LLAMA_31_8B,
            what="o_proj (attention output projection)",
            keys=("hidden_size", "num_attention_heads", "derived.head_dim"),
            in_features=4096,
            out_features=4096,
            dtype="bfloat16",
        ),
        bw.linear_backward(
            LLAMA_32_1B,
            what="down_proj (MLP output projection)",
            keys=("hidden_size", "intermediate_size"),
            in_features=8192,
            out_features=2048,
            dtype="bfloat16",
        ),
        bw.gated_activation_backward(LLAMA_31_8B),
        bw.gated_activation_backward(GEMMA2_9B),
        bw.cross_entropy_backward(LLAMA_32_1B, tokens=(1, 8, 16, 64, 100, 128, 200, 256)),
        bw.cross_entropy_backward(QWEN25_05B, tokens=(1, 4, 8, 16, 32, 64, 100, 160)),
    ]
    gpu = [TOKENS, TOKENS, TOKENS, TOKENS, TOKENS, TOKENS, tokens(sw.VOCAB_TRAIN_TOKENS), tokens(sw.VOCAB_TRAIN_TOKENS)]
    return [_gpu(d, g) for d, g in zip(drafts, gpu, strict=True)]


def drafts() -> list[ProblemDraft]:
    return _norms() + _elementwise() + _matmul() + _backward()
