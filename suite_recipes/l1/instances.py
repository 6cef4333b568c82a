"""Every L1 problem: each op family instantiated for the real models it occurs in.

Two tiers (docs/tiers.md): the recipe functions make the CPU tier (small workloads, each well under a
second on a 2-core CPU); `_gpu` adds the GPU tier (workload.jsonl) from the shared sweeps of
`catalog/sweeps.py`, chosen by what the axis means: training/prefill tokens (1k-64k), decode rows,
native image token counts (197/257/577/1025/1370 per image), Whisper's 1,500 frames (3,000 mel frames)
per 30 s clip, video latents at the model's native frames and resolutions.
"""

from __future__ import annotations

from suite_recipes.l1 import backward as bw
from suite_recipes.l1 import convolution as conv
from suite_recipes.l1 import elementwise as ew
from suite_recipes.l1 import matmul as mm
from suite_recipes.l1 import norms, vocab
from suite_recipes.l1.models import (
    CLIP_L14, COMMAND_R, CONVNEXT_T, DEEPSEEK_V3, DINOV2_B14, DINOV2_L14,
    DLRM_DCNV2, GEMMA2_9B, GPT_OSS_20B, HUNYUAN_VIDEO, LLAMA_31_70B,
    LLAMA_31_8B, LLAMA_32_1B, MAMBA2_27B, MISTRAL_7B_V03, PHI4_MINI,
    QWEN25_05B, QWEN25_7B, QWEN25_VL_7B, QWEN3_8B, SAM_B,
    SDXL_VAE, VIT_B16, VIT_L16, WAN21_1_3B, WAV2VEC2_BASE, WHISPER_LARGE_V3,
    WHISPER_TINY)
from suite_recipes import sweeps as sw
from suite_recipes.shapes import tokens
from suite_recipes.sweeps import crossed, image_tokens
from solbench.suite.draft import ProblemDraft

TOKENS = sw.per("num_tokens", sw.TRAIN_TOKENS)
"""Training / prefill tokens, 1 to 64k, odd sizes mixed in."""


def _gpu(draft: ProblemDraft, workloads, **options) -> ProblemDraft:
    """The draft with `workloads` as its GPU tier and its recipe workloads as the CPU tier (`options`: how a
    CPU workload the GPU tier also has is moved, `sweeps.tiered`)."""
    return sw.tiered(draft, workloads, **options)


def _seqs(pairs) -> list[dict[str, int]]:
    return sw.pairs("batch_size", "seq_len", pairs)


def _maps(stages) -> list[dict[str, int]]:
    return [{"channels": c, "height": s, "width": s} for c, s in sorted(stages, key=lambda p: p[0] * p[1] ** 2)]


VAE_STAGES = ((512, 32), (512, 64), (512, 96), (512, 128), (256, 256), (512, 192), (512, 256), (256, 384),
              (128, 512), (512, 384), (256, 512), (512, 512), (128, 768), (256, 768), (128, 1024), (256, 1024))
"""(channels, side) of the SDXL VAE decoder's stages for 256 to 1,024 px images (latents of side / 8,
upsampled 2x per stage to the full size; channels 512, 512, 256, 128 by stage)."""


def _norms() -> list[ProblemDraft]:
    return [
        _gpu(norms.rmsnorm(LLAMA_31_8B), TOKENS), _gpu(norms.rmsnorm(DEEPSEEK_V3), TOKENS),
        _gpu(norms.rmsnorm(GEMMA2_9B, gemma=True), TOKENS),
        _gpu(norms.layernorm(VIT_B16, hidden_key="hidden_size", eps=1e-12, eps_source="layer_norm_eps", dtype="float32",
                        dtype_source="torch_dtype", sequence="197 tokens per 224 px image, 577 at 384 px (patches + CLS)",
                        workloads=[(1, 197), (2, 197), (8, 197), (16, 197), (32, 197), (64, 197), (1, 577), (8, 577)]),
             _seqs(image_tokens((197, 577)))),
        _gpu(norms.layernorm(DINOV2_L14, hidden_key="hidden_size", eps=1e-6, eps_source="layer_norm_eps",
                        dtype="float32", dtype_source="fp32 inference",
                        sequence="patches + CLS: 257 at 224 px, 1025 at 448 px, 1370 at 518 px (image_size)",
                        workloads=[(1, 257), (8, 257), (32, 257), (1, 1025), (4, 1025), (1, 1370), (3, 1370),
                                   (8, 1370)]),
             _seqs(image_tokens((257, 1025, 1370)))),
        _gpu(norms.layernorm(WHISPER_LARGE_V3, hidden_key="d_model", eps=1e-5, eps_source="nn.LayerNorm default",
                        dtype="float16", dtype_source="fp16 inference, openai-whisper's default",
                        sequence="1500 encoder frames per 30 s clip (max_source_positions) or decoder tokens",
                        workloads=[(1, 1500), (2, 1500), (4, 1500), (8, 1500), (16, 1500), (1, 448), (5, 1),
                                   (32, 1)]),
             _seqs((c, sw.WHISPER_FRAMES_PER_CLIP) for c in sw.CLIPS)),
        _gpu(norms.cohere_layernorm(COMMAND_R), TOKENS),
        _gpu(norms.vae_groupnorm(SDXL_VAE), _maps(VAE_STAGES), keep=("channels",)),
    ]


def _elementwise() -> list[ProblemDraft]:
    return [
        _gpu(ew.gated_activation(QWEN3_8B, tokens=ew.CAPPED_TOKENS), TOKENS),
        _gpu(ew.gated_activation(LLAMA_31_70B, tp=8), TOKENS),
        _gpu(ew.gated_activation(GEMMA2_9B, tokens=ew.CAPPED_TOKENS), TOKENS),
        _gpu(ew.activation(WHISPER_LARGE_V3, act_key="activation_function", width_key="encoder_ffn_dim", dtype="float16",
                      dtype_source="fp16 inference",
                      rows="decoder tokens, or clips x 1500 encoder frames (max_source_positions)",
                      workloads=(1, 4, 32, 448, 1000, 1500, 3000, 4500)),
             tokens(sw.whisper_frames())),
        _gpu(ew.activation(CLIP_L14, act_key="vision_config.hidden_act", width_key="vision_config.intermediate_size",
                      dtype="float32", dtype_source="torch_dtype",
                      rows="images x 257 tokens (224 px image_size, patch_size 14, plus CLS)",
                      workloads=tuple(b * 257 for b in (1, 2, 3, 4, 6, 8, 12, 16))),
             tokens(b * 257 for b in sw.IMAGES)),
        _gpu(ew.rope(LLAMA_31_8B), TOKENS), _gpu(ew.rope(PHI4_MINI), TOKENS),
        # 640 bytes a token: a global training batch of up to 32 x 32k tokens reaches 400 MB
        _gpu(ew.mamba2_chunk_cumsum(MAMBA2_27B),
             _seqs(sw.crossed((1, 4, 8, 16, 32), (1024, 4096, 8192, 16384, 32768)))),
    ]


def _vocab() -> list[ProblemDraft]:
    rows, chunk = tokens(sw.VOCAB_ROWS), tokens(sw.VOCAB_TRAIN_TOKENS)
    return [_gpu(vocab.softmax(LLAMA_31_8B, log=False), rows), _gpu(vocab.softmax(QWEN3_8B, log=True), rows),
            _gpu(vocab.final_logit_softcap(GEMMA2_9B), rows), _gpu(vocab.cross_entropy(LLAMA_32_1B), chunk),
            _gpu(vocab.greedy_argmax(MISTRAL_7B_V03), rows),
            # 200 bytes a token (32 experts): 64k tokens move 13 MB; the op never reaches 400 MB
            _gpu(vocab.router_topk(GPT_OSS_20B), TOKENS)]


def _matmul() -> list[ProblemDraft]:
    head_dim = 128
    drafts = [
        mm.linear(LLAMA_31_8B, what="qkv_proj (fused q, k, v projections)",
                  keys=("hidden_size", "num_attention_heads", "num_key_value_heads", "derived.head_dim",
                        "attention_bias"),
                  in_features=4096, out_features=(32 + 2 * 8) * head_dim,
                  formula="(num_attention_heads + 2 num_key_value_heads) x head_dim = 6144", bias=False,
                  dtype="bfloat16", dtype_source="torch_dtype"),
        mm.linear(QWEN25_7B, what="down_proj (MLP output projection, row-parallel shard at tensor parallelism 4: "
                                 "intermediate_size 18944 / 4 = 4736 in_features)",
                  keys=("hidden_size", "intermediate_size"), in_features=18944 // 4, out_features=3584,
                  formula="hidden_size 3584", bias=False, dtype="bfloat16", dtype_source="bf16 inference"),
        mm.linear(DEEPSEEK_V3, what="fused_qkv_a_proj (MLA q_a and kv_a projections)",
                  keys=("hidden_size", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim"),
                  in_features=7168, out_features=1536 + 512 + 64,
                  formula="q_lora_rank + kv_lora_rank + qk_rope_head_dim = 2112", bias=False, dtype="bfloat16",
                  dtype_source="torch_dtype"),
        mm.linear(VIT_B16, what="qkv (fused attention input projection)", keys=("hidden_size", "qkv_bias"),
                  in_features=768, out_features=3 * 768, formula="3 x hidden_size = 2304", bias=True,
                  dtype="float32", dtype_source="torch_dtype", rows="images x 197 tokens (224 px, patch 16, CLS)",
                  tokens=tuple(b * 197 for b in (1, 2, 4, 8, 16, 24, 32, 40))),
        mm.attention(LLAMA_31_8B, keys=("num_attention_heads", "num_key_value_heads", "derived.head_dim",
                                        "torch_dtype"),
                     heads=32, kv_heads=8, head_dim=128, causal=True, dtype="bfloat16", dtype_source="torch_dtype",
                     what="prefill self-attention",
                     sequences=[(1, 128), (1, 255), (1, 512), (1, 1024), (8, 256), (4, 512), (2, 1000), (16, 128)]),
        mm.attention(DINOV2_L14, keys=("num_attention_heads", "derived.head_dim", "patch_size", "image_size"),
                     heads=16, kv_heads=16, head_dim=64, causal=False, dtype="float32", dtype_source="fp32 inference",
                     what="image self-attention over patches + CLS (257 at 224 px, 1025 at 448, 1370 at 518 px)",
                     sequences=[(1, 257), (8, 257), (32, 257), (1, 1025), (4, 1025), (1, 1370), (2, 1370), (4, 1370)]),
        mm.embedding(WHISPER_TINY, dtype="float16", what="decoder",
                     tokens=(1, 4, 16, 64, 448, 1000, 3584, 14336)),
        mm.dlrm_embedding_bag(DLRM_DCNV2, table=4),
    ]
    images = tokens(sorted(b * t for b, t in image_tokens((197, 577))))
    gpu = [TOKENS, TOKENS, TOKENS, images, _seqs(sw.PREFILL_SEQUENCES),
           _seqs(image_tokens((257, 1025, 1370), sw.BATCHES)),
           TOKENS,  # decoder tokens: the 40 MB table plus 768 bytes a token stays under 100 MB at 64k
           # per-sample ids and pooled rows (560 bytes): global batches to 65,536 stay under 50 MB
           sw.per("batch_size", (1, 64, 128, 256, 512, 1000, 1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768,
                                 49152, 65536))]
    options: dict = {}
    return [_gpu(d, g, **options.get(d.name, {})) for d, g in zip(drafts, gpu, strict=True)]


def _convolution() -> list[ProblemDraft]:
    drafts = [
        conv.patch_embed(DINOV2_L14, hidden_key="hidden_size", patch_key="patch_size", size_key="image_size",
                         dtype="float32", dtype_source="fp32 inference",
                         images=[(1, 224), (8, 224), (32, 224), (1, 448), (4, 448), (1, 518), (4, 518), (8, 518)]),
        conv.patch_embed(SAM_B, hidden_key="encoder_embed_dim", patch_key="patch_size", size_key="image_size",
                         dtype="float32", dtype_source="fp32 inference",
                         images=[(b, 1024) for b in (1, 2, 3, 4, 5, 6, 7, 8)]),
        conv.vae_conv3x3(SDXL_VAE), conv.convnext_depthwise(CONVNEXT_T),
        conv.conv1d(WHISPER_LARGE_V3, keys=("num_mel_bins", "d_model"), name="conv1_mel128_d1280",
                    what="encoder stem conv1 on the log-mel spectrogram (num_mel_bins 128 -> d_model 1280)",
                    in_ch=128, out_ch=1280, kernel=3, stride=1, padding=1, groups=1, bias=True, dtype="float16",
                    length="Mel frames (3000 = 30 s, 100 per second)",
                    workloads=[(1, 3000), (2, 3000), (3, 3000), (4, 3000), (1, 1000), (4, 1000), (1, 500),
                               (8, 500)]),
        conv.conv1d(WAV2VEC2_BASE, keys=("conv_dim", "conv_kernel", "conv_stride", "conv_bias"),
                    name="feature_conv0_k10s5", in_ch=1, out_ch=512, kernel=10, stride=5, padding=0, groups=1,
                    bias=False, dtype="float32",
                    what="feature encoder layer 0 on the raw 16 kHz waveform (conv_dim[0], conv_kernel[0], "
                         "conv_stride[0], conv_bias false)",
                    length="Audio samples at 16 kHz",
                    workloads=[(1, 16000), (1, 32000), (1, 48000), (1, 80000), (2, 48000), (4, 16000),
                               (1, 160000), (2, 80000)]),
        conv.video_patch_embed(WAN21_1_3B, hidden_key="dim", in_key="in_dim", dtype="bfloat16",
                               dtype_source="param_dtype",
                               what="latents of 480x832 px clips (vae_stride 4x8x8: 60x104) and 1 (image) to 81 "
                                    "frames (1 to 21 latent frames), and 720x1280 px (90x160)",
                               latents=[(1, 60, 104), (2, 60, 104), (5, 60, 104), (9, 60, 104), (17, 60, 104),
                                        (1, 90, 160), (5, 90, 160), (9, 90, 160)]),
        conv.video_patch_embed(HUNYUAN_VIDEO, hidden_key="hidden_size", in_key="in_channels", dtype="bfloat16",
                               dtype_source="bf16 inference",
                               what="latents of 544x960 px (68x120) and 720x1280 px (90x160) clips, 4x temporal "
                                    "compression: 1 to 33 frames",
                               latents=[(1, 68, 120), (2, 68, 120), (3, 68, 120), (5, 68, 120), (9, 68, 120),
                                        (1, 90, 160), (3, 90, 160), (5, 90, 160)]),
        conv.qwen_vl_patch_embed(QWEN25_VL_7B),
    ]
    gpu = [sw.pairs("batch_size", "image_size", crossed(sw.IMAGES[:12], (224, 448, 518),
                                                        weight=lambda b, s: b * s * s)),
           sw.pairs("batch_size", "image_size", ((b, 1024) for b in sw.BATCHES)),
           _maps(VAE_STAGES),
           [{"batch_size": b, "channels": c, "height": h, "width": h}
            for b, (c, h) in crossed((1, 8, 32, 64, 128, 256), ((96, 56), (192, 28), (384, 14), (768, 7)),
                                     weight=lambda b, ch: b * ch[0] * ch[1] ** 2)],
           sw.pairs("batch_size", "length", ((c, 2 * sw.WHISPER_FRAMES_PER_CLIP) for c in sw.CLIPS)),
           sw.pairs("batch_size", "length", crossed((1, 2, 4, 8, 16), (16000, 80000, 160000, 480000))),
           # one clip's latents (no batch axis): 81 frames at 480p and 720p reach 240 MB, not 400
           [{"frames": f, "height": h, "width": w}
            for f, (h, w) in crossed((1, 2, 3, 5, 9, 13, 17, 21), ((60, 104), (90, 160)),
                                     weight=lambda f, hw: f * hw[0] * hw[1])],
           [{"frames": f, "height": h, "width": w}
            for f, (h, w) in crossed((1, 2, 3, 5, 9, 13, 17, 25, 33), ((68, 120), (90, 160)),
                                     weight=lambda f, hw: f * hw[0] * hw[1])],
           # single images of 224 to 1,792 px ((side / 14)^2 patches), then batches of up to 6 such images
           tokens((256, 576, 1024, 1600, 2304, 4096, 6400, 9216, 12544, 16384, 24576, 32768, 49152, 65536,
                   81920, 98304), axis="num_patches")]
    # channels stay a real stage's; SAM's CPU images move by whole patches
    options = {drafts[2].name: {"keep": ("channels",)}, drafts[3].name: {"keep": ("channels",)},
               drafts[1].name: {"steps": {"image_size": 16}}}
    return [_gpu(d, g, **options.get(d.name, {})) for d, g in zip(drafts, gpu, strict=True)]


def _backward() -> list[ProblemDraft]:
    drafts = [
        bw.rmsnorm_backward(LLAMA_31_8B), bw.rmsnorm_backward(QWEN25_7B),
        bw.layernorm_backward(VIT_B16, tokens_per_image="197 tokens (224 px, patch 16, CLS)",
                              tokens=tuple(b * 197 for b in (1, 2, 4, 8, 12, 16, 24, 32))),
        bw.linear_backward(LLAMA_31_8B, what="o_proj (attention output projection)",
                           keys=("hidden_size", "num_attention_heads", "derived.head_dim"),
                           in_features=4096, out_features=4096, dtype="bfloat16"),
        bw.linear_backward(LLAMA_32_1B, what="down_proj (MLP output projection)",
                           keys=("hidden_size", "intermediate_size"), in_features=8192, out_features=2048,
                           dtype="bfloat16"),
        bw.attention_softmax_backward(VIT_B16), bw.gelu_backward(VIT_L16, tokens_per_image=197),
        bw.gated_activation_backward(LLAMA_31_8B), bw.gated_activation_backward(GEMMA2_9B),
        bw.embedding_backward(WHISPER_TINY),
        bw.cross_entropy_backward(LLAMA_32_1B, tokens=(1, 8, 16, 64, 100, 128, 200, 256)),
        bw.cross_entropy_backward(QWEN25_05B, tokens=(1, 4, 8, 16, 32, 64, 100, 160)),
        bw.patch_embed_backward(VIT_B16, batches=(1, 2, 3, 4, 8, 16, 24, 32)),
        mm.attention_backward(DINOV2_B14, keys=("num_attention_heads", "derived.head_dim", "patch_size",
                                                "image_size"),
                              heads=12, head_dim=64, dtype="bfloat16",
                              what="fine-tuning with bf16 autocast, self-attention over patches + CLS (257 at 224 "
                                   "px, 577 at 336, 1025 at 448, 1370 at 518 px)",
                              sequences=[(1, 257), (4, 257), (8, 257), (16, 257), (1, 577), (4, 577), (1, 1025),
                                         (1, 1370)]),
    ]
    vit = tokens(sorted(b * t for b, t in image_tokens((197, 577))))
    gpu = [TOKENS, TOKENS, vit, TOKENS, TOKENS, sw.per("batch_size", sw.IMAGES),
           tokens(b * 197 for b in sw.IMAGES), TOKENS, TOKENS,
           TOKENS,  # the 80 MB fp32 weight gradient plus 776 bytes a token: 130 MB at 64k tokens
           tokens(sw.VOCAB_TRAIN_TOKENS), tokens(sw.VOCAB_TRAIN_TOKENS), sw.per("batch_size", sw.IMAGES),
           _seqs(image_tokens((257, 577, 1025, 1370), sw.BATCHES))]
    options: dict = {}
    return [_gpu(d, g, **options.get(d.name, {})) for d, g in zip(drafts, gpu, strict=True)]


def drafts() -> list[ProblemDraft]:
    return _norms() + _elementwise() + _vocab() + _matmul() + _convolution() + _backward()
