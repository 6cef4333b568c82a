"""The models L1 draws from, with every published value any L1 problem cites (copied from
solbench/suite/data/model-configs.json; each problem keeps only the values it uses, see `common.uses`)."""

from __future__ import annotations

from suite_recipes.models import model

# --- language -------------------------------------------------------------------------------------
LLAMA_31_8B = model(
    "Llama-3.1-8B",
    "meta-llama/Llama-3.1-8B",
    "language",
    {
        "hidden_size": 4096,
        "rms_norm_eps": 1e-05,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "derived.head_dim": 128,
        "vocab_size": 128256,
        "torch_dtype": "bfloat16",
        "attention_bias": False,
        "hidden_act": "silu",
    },
)
LLAMA_31_70B = model(
    "Llama-3.1-70B",
    "meta-llama/Llama-3.1-70B",
    "language",
    {"intermediate_size": 28672, "hidden_act": "silu", "torch_dtype": "bfloat16"},
)
LLAMA_32_1B = model(
    "Llama-3.2-1B",
    "meta-llama/Llama-3.2-1B",
    "language",
    {"hidden_size": 2048, "intermediate_size": 8192, "vocab_size": 128256, "torch_dtype": "bfloat16"},
)
QWEN25_7B = model(
    "Qwen2.5-7B",
    "Qwen/Qwen2.5-7B",
    "language",
    {"hidden_size": 3584, "intermediate_size": 18944, "rms_norm_eps": 1e-06},
)
QWEN3_8B = model(
    "Qwen3-8B",
    "Qwen/Qwen3-8B",
    "language",
    {"intermediate_size": 12288, "hidden_act": "silu", "vocab_size": 151936, "torch_dtype": "bfloat16"},
)
DEEPSEEK_V3 = model(
    "DeepSeek-V3",
    "deepseek-ai/DeepSeek-V3",
    "language",
    {
        "hidden_size": 7168,
        "rms_norm_eps": 1e-06,
        "torch_dtype": "bfloat16",
        "q_lora_rank": 1536,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
    },
)
GEMMA2_9B = model(
    "Gemma-2-9B",
    "google/gemma-2-9b",
    "language",
    {
        "hidden_size": 3584,
        "rms_norm_eps": 1e-06,
        "intermediate_size": 14336,
        "hidden_act": "gelu_pytorch_tanh",
        "final_logit_softcapping": 30.0,
        "vocab_size": 256000,
        "torch_dtype": "bfloat16",
    },
)
QWEN25_05B = model("Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B", "language", {"vocab_size": 151936})

# --- vision ---------------------------------------------------------------------------------------
VIT_B16 = model(
    "ViT-B/16",
    "google/vit-base-patch16-224",
    "vision",
    {
        "hidden_size": 768,
        "num_attention_heads": 12,
        "patch_size": 16,
        "image_size": 224,
        "layer_norm_eps": 1e-12,
        "torch_dtype": "float32",
        "derived.head_dim": 64,
        "qkv_bias": True,
    },
)
DINOV2_L14 = model(
    "DINOv2 ViT-L/14",
    "facebook/dinov2-large",
    "vision",
    {
        "hidden_size": 1024,
        "num_attention_heads": 16,
        "derived.head_dim": 64,
        "patch_size": 14,
        "image_size": 518,
        "layer_norm_eps": 1e-06,
    },
)

# --- speech ---------------------------------------------------------------------------------------
WHISPER_LARGE_V3 = model(
    "Whisper large-v3",
    "openai/whisper-large-v3",
    "speech",
    {
        "d_model": 1280,
        "num_mel_bins": 128,
        "encoder_ffn_dim": 5120,
        "max_source_positions": 1500,
        "activation_function": "gelu",
    },
)
