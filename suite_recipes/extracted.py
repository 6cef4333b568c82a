"""The suite's extracted problems: modules of real models captured by `solbench extract`.

`scripts/extract-suite` turns each entry into ``problems/<set>/<name>/`` (``origin:extract``, and ``"recipe":
"extracted"`` in its provenance.json; build-suite leaves those folders alone). Every cited config value is read
from the model's record in solbench/suite/data/model-configs.json (vendored) by the extractor itself, so it is the
published value by construction.

Two tiers (docs/tiers.md): ``tokens`` / ``shapes`` are the CPU tier (workload.cpu.jsonl), sized for a
2-core CI run; ``gpu_tokens`` / ``gpu_shapes`` the GPU tier (workload.jsonl), 16 workloads at upstream's
scale from `suite_recipes/sweeps.py`: training/prefill tokens to 64k, native image lengths (ViT-B/16: 197
tokens at 224 px, 577 at 384 px; CLIP ViT-L/14: 257 at 224 px, 577 at 336 px) and Whisper's 1,500
encoder frames per 30 s clip.

Where a real module's weights are too large for a 2-core CI run, the entry takes a tensor-parallel
shard (``tp``: heads and intermediate sizes divided as a TP rank holds them; the description says
so) rather than a made-up size, and only where the shard is a function a rank computes alone. CPU
token sweeps for backward entries stop lower than forward ones (a backward pass costs about 3
forward passes).
"""

from __future__ import annotations

from dataclasses import dataclass

from suite_recipes import sweeps

NORM_TOKENS = (1, 7, 32, 128, 255, 512, 1024, 2048)
GEMM_TOKENS = (1, 3, 16, 64, 100, 128, 255, 512)
BACKWARD_TOKENS = (1, 3, 16, 32, 64, 100, 128, 255)
NORM_BACKWARD_TOKENS = (1, 7, 32, 128, 255, 512, 768, 1024)
SEQUENCES = ((1, 16), (1, 64), (2, 100), (1, 128), (4, 64), (1, 255), (2, 128), (1, 384))
"""(batch_size, seq_len): causal prefill (decoders) or bidirectional encoder sequences."""
SHORT_SEQUENCES = ((1, 8), (1, 16), (2, 31), (1, 64), (4, 32), (1, 100), (2, 64), (1, 160))
"""For whole layers and backward attention, whose per-token cost is largest."""
VIT_B16_SEQUENCES = ((1, 50), (1, 101), (1, 145), (1, 197), (2, 197), (1, 257), (1, 401), (1, 577))
"""ViT-B/16 images: 1 + (side / 16)^2 tokens at 112, 160, 192, 224 (197, the native size), 256, 320 and
384 px (577, the fine-tuning size), not a language model's token sweep."""
VIT_B16_TOKENS = (50, 197, 394, 577, 788, 1154, 1576, 3152)
"""Token-layout ViT-B/16 modules: images x 197 (224 px) or x 577 (384 px), flattened."""
CLIP_L14_TOKENS = (257, 514, 577, 771, 1028, 1154, 1542, 2056)
"""CLIP ViT-L/14 images: x 257 tokens at 224 px, x 577 at 336 px."""
WHISPER_FRAMES = (1500, 3000, 4500, 6000, 7500, 9000, 10500, 12000)
"""Whisper encoder positions: 1,500 per 30 s clip (the encoder always sees a whole padded window), 1-8 clips."""


# --- GPU tier ------------------------------------------------------------------------------------------
GPU_TOKENS = sweeps.TRAIN_TOKENS
"""Training / prefill tokens, 1 to 64k."""
GPU_SEQUENCES = sweeps.PREFILL_SEQUENCES
"""(batch, tokens per sequence): 1k to 64k tokens of prefill."""
LAYER_IMAGES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)
"""Images of a batch for modules that attend over the patches (the score matrices grow with it)."""
GPU_VIT_B16_SEQUENCES = tuple(sweeps.image_tokens((197, 577), LAYER_IMAGES))
"""ViT-B/16 at its native 224 px (197 tokens) and 384 px (577 tokens), 1 to 128 images."""
GPU_VIT_B16_TOKENS = tuple(sorted(b * t for b, t in sweeps.image_tokens((197, 577))))
"""Token-layout ViT-B/16 modules: images x 197 or x 577, 1 to 384 images, flattened."""
GPU_CLIP_L14_TOKENS = tuple(sorted(b * t for b, t in sweeps.image_tokens((257, 577))))
"""CLIP ViT-L/14 images x 257 (224 px) or x 577 (336 px), 1 to 384 images, flattened."""
GPU_WHISPER_FRAMES = tuple(sweeps.whisper_frames())
"""Whisper encoder positions, token layout: 1,500 per clip, 1 to 64 clips."""
MOE_GPU_TOKENS = (1, 16, 128, 256, 512, 1000, 1024, 2048, 3000, 4096, 6144, 8192, 12288, 16384, 20480, 24576)
"""Routed MoE blocks: which experts' weights are read depends on the router's values, so `solbench sol`
runs the reference for real on the CPU, and only for inputs up to 256 MiB (sol/analysis.py
REAL_RUN_BUDGET_BYTES); with 151 MB of expert shards and router that stops at 24k tokens (252 MB of
inputs, 352 MB with the output)."""
GPU_WHISPER_CLIPS = tuple((c, sweeps.WHISPER_FRAMES_PER_CLIP) for c in sweeps.CLIPS)
"""Whisper encoder layers: 1 to 64 clips of 1,500 frames (the encoder always sees a whole 30 s window)."""


@dataclass(frozen=True)
class Extraction:
    model: str
    """model-configs.json ``name``."""
    architecture: str
    module: str
    dtype: str = "bfloat16"
    tp: int = 1
    backward: bool = False
    tokens: tuple[int, ...] | None = None
    """CPU tier, token layout."""
    shapes: tuple[tuple[int, int], ...] | None = None
    """CPU tier, sequence layout: (batch_size, seq_len)."""
    gpu_tokens: tuple[int, ...] | None = None
    """GPU tier, token layout (None with `tokens` set: `GPU_TOKENS`)."""
    gpu_shapes: tuple[tuple[int, int], ...] | None = None
    """GPU tier, sequence layout (None with `shapes` set: `GPU_SEQUENCES`)."""

    def gpu_workloads(self) -> list[dict[str, int]]:
        """The GPU tier's axis values."""
        if self.tokens is not None:
            return sweeps.per("num_tokens", self.gpu_tokens or GPU_TOKENS)
        return sweeps.pairs("batch_size", "seq_len", self.gpu_shapes or GPU_SEQUENCES)


EXTRACTIONS: tuple[Extraction, ...] = (
    # L1: norms
    Extraction("OLMo-2-1124-7B", "olmo2", "norm", dtype="float32", tokens=NORM_TOKENS),
    Extraction("ViT-B/16", "vit", "norm", dtype="float32", tokens=VIT_B16_TOKENS, gpu_tokens=GPU_VIT_B16_TOKENS),
    Extraction(
        "Whisper large-v3", "whisper", "norm", dtype="float32", tokens=WHISPER_FRAMES, gpu_tokens=GPU_WHISPER_FRAMES
    ),
    Extraction("Mistral-7B-v0.3", "mistral", "norm", backward=True, tokens=NORM_BACKWARD_TOKENS),
    Extraction(
        "CLIP ViT-L/14",
        "clip",
        "norm",
        dtype="float32",
        backward=True,
        tokens=CLIP_L14_TOKENS,
        gpu_tokens=GPU_CLIP_L14_TOKENS,
    ),
    # L2: MLPs
    Extraction("Llama-3.1-8B", "llama", "mlp", tp=8, tokens=GEMM_TOKENS),
    Extraction("Qwen3-8B", "qwen3", "mlp", tp=8, tokens=GEMM_TOKENS),
    Extraction("Gemma-2-9B", "gemma2", "mlp", tp=8, tokens=GEMM_TOKENS),
    Extraction("Phi-3.5-mini-instruct", "phi3", "mlp", tp=4, tokens=GEMM_TOKENS),
    Extraction("Granite-3.1-2B-Instruct", "granite", "mlp", tp=2, tokens=GEMM_TOKENS),
    Extraction("Llama-3.1-8B", "llama", "mlp", tp=8, backward=True, tokens=BACKWARD_TOKENS),
    Extraction("Gemma-2-9B", "gemma2", "mlp", tp=8, backward=True, tokens=BACKWARD_TOKENS),
    # L2: attention (rotary, GQA, QK-norm, soft-capping as each model has them)
    Extraction("Llama-3.1-8B", "llama", "attention", tp=8, shapes=SEQUENCES),
    Extraction("Qwen3-8B", "qwen3", "attention", tp=8, shapes=SEQUENCES),
    Extraction("Gemma-2-9B", "gemma2", "attention", tp=8, shapes=SEQUENCES),
    # OLMo-2 normalises q and k over the whole projection: no TP rank computes that alone, so the whole module.
    Extraction("OLMo-2-1124-7B", "olmo2", "attention", shapes=SHORT_SEQUENCES),
    Extraction(
        "ViT-B/16",
        "vit",
        "attention",
        dtype="float32",
        backward=True,
        shapes=VIT_B16_SEQUENCES,
        gpu_shapes=GPU_VIT_B16_SEQUENCES,
    ),
    # L2: whole layers
    Extraction("Qwen3-0.6B", "qwen3", "decoder_layer", shapes=SHORT_SEQUENCES),
    Extraction("Llama-3.2-1B", "llama", "decoder_layer", shapes=SHORT_SEQUENCES),  # whole layers have no TP shard
    Extraction(
        "ViT-B/16", "vit", "encoder_layer", dtype="float32", shapes=VIT_B16_SEQUENCES, gpu_shapes=GPU_VIT_B16_SEQUENCES
    ),
    # The real length, 1,500 frames, takes 1-2.5 s per call on the 2-core CPU: the CPU tier stays short, the
    # GPU tier runs whole 30 s clips.
    Extraction("Whisper large-v3", "whisper", "encoder_layer", shapes=SHORT_SEQUENCES, gpu_shapes=GPU_WHISPER_CLIPS),
    # L2: mixture of experts (grouped-GEMM experts; 128 experts top-8, TP=8 expert shards; float32 router)
    Extraction("Qwen3-30B-A3B", "qwen3_moe", "moe", tp=8, tokens=GEMM_TOKENS, gpu_tokens=MOE_GPU_TOKENS),
)
