"""The models L1 draws from, with every published value any L1 problem cites (copied from
solbench/suite/data/model-configs.json; each problem keeps only the values it uses, see `common.uses`)."""

from __future__ import annotations

from suite_recipes.models import model

# --- language -------------------------------------------------------------------------------------
LLAMA_31_8B = model("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "language", {
    "hidden_size": 4096, "rms_norm_eps": 1e-05, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_key_value_heads": 8, "derived.head_dim": 128, "vocab_size": 128256, "torch_dtype": "bfloat16",
    "attention_bias": False, "hidden_act": "silu"})
LLAMA_31_70B = model("Llama-3.1-70B", "meta-llama/Llama-3.1-70B", "language", {
    "intermediate_size": 28672, "hidden_act": "silu", "torch_dtype": "bfloat16"})
LLAMA_32_1B = model("Llama-3.2-1B", "meta-llama/Llama-3.2-1B", "language", {
    "hidden_size": 2048, "intermediate_size": 8192, "vocab_size": 128256, "torch_dtype": "bfloat16"})
QWEN25_7B = model("Qwen2.5-7B", "Qwen/Qwen2.5-7B", "language", {
    "hidden_size": 3584, "intermediate_size": 18944, "rms_norm_eps": 1e-06})
QWEN3_8B = model("Qwen3-8B", "Qwen/Qwen3-8B", "language", {
    "intermediate_size": 12288, "hidden_act": "silu", "vocab_size": 151936, "torch_dtype": "bfloat16"})
QWEN3_30B_A3B = model("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", "language", {
    "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": True})
GPT_OSS_20B = model("gpt-oss-20b", "openai/gpt-oss-20b", "language", {"num_experts": 32, "num_experts_per_tok": 4})
DEEPSEEK_V3 = model("DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "language", {
    "hidden_size": 7168, "rms_norm_eps": 1e-06, "torch_dtype": "bfloat16", "q_lora_rank": 1536,
    "kv_lora_rank": 512, "qk_rope_head_dim": 64})
OLMO2_7B = model("OLMo-2-1124-7B", "allenai/OLMo-2-1124-7B", "language", {
    "hidden_size": 4096, "rms_norm_eps": 1e-06, "torch_dtype": "float32"})
GEMMA2_9B = model("Gemma-2-9B", "google/gemma-2-9b", "language", {
    "hidden_size": 3584, "rms_norm_eps": 1e-06, "intermediate_size": 14336, "hidden_act": "gelu_pytorch_tanh",
    "final_logit_softcapping": 30.0, "vocab_size": 256000, "torch_dtype": "bfloat16"})
COMMAND_R = model("Command-R-08-2024 (32B)", "CohereForAI/c4ai-command-r-08-2024", "language", {
    "hidden_size": 8192, "layer_norm_eps": 1e-05, "torch_dtype": "bfloat16"})
PHI4_MINI = model("Phi-4-mini-instruct", "microsoft/Phi-4-mini-instruct", "language", {
    "num_attention_heads": 24, "num_key_value_heads": 8, "derived.head_dim": 128, "partial_rotary_factor": 0.75,
    "torch_dtype": "bfloat16"})
MISTRAL_7B_V03 = model("Mistral-7B-v0.3", "mistralai/Mistral-7B-v0.3", "language", {"vocab_size": 32768})
QWEN25_05B = model("Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B", "language", {"vocab_size": 151936})
MAMBA2_27B = model("Mamba2-2.7B", "state-spaces/mamba2-2.7b", "language", {
    "derived.mamba_num_heads": 80, "chunk_size": 256})

# --- vision ---------------------------------------------------------------------------------------
VIT_B16 = model("ViT-B/16", "google/vit-base-patch16-224", "vision", {
    "hidden_size": 768, "num_attention_heads": 12, "patch_size": 16, "image_size": 224, "layer_norm_eps": 1e-12,
    "torch_dtype": "float32", "derived.head_dim": 64, "qkv_bias": True})
VIT_L16 = model("ViT-L/16", "google/vit-large-patch16-224", "vision", {"intermediate_size": 4096, "patch_size": 16})
DINOV2_L14 = model("DINOv2 ViT-L/14", "facebook/dinov2-large", "vision", {
    "hidden_size": 1024, "num_attention_heads": 16, "derived.head_dim": 64, "patch_size": 14, "image_size": 518,
    "layer_norm_eps": 1e-06})
DINOV2_B14 = model("DINOv2 ViT-B/14", "facebook/dinov2-base", "vision", {
    "num_attention_heads": 12, "derived.head_dim": 64, "patch_size": 14, "image_size": 518})
CLIP_L14 = model("CLIP ViT-L/14", "openai/clip-vit-large-patch14", "vision", {
    "vision_config.intermediate_size": 4096, "vision_config.hidden_act": "quick_gelu",
    "vision_config.patch_size": 14, "vision_config.image_size": 224, "torch_dtype": "float32"})
SAM_B = model("SAM ViT-B image encoder", "facebook/sam-vit-base", "vision", {
    "encoder_embed_dim": 768, "patch_size": 16, "image_size": 1024})
CONVNEXT_T = model("ConvNeXt-T", "facebook/convnext-tiny-224", "vision", {
    "hidden_sizes": [96, 192, 384, 768], "dwconv_kernel_size": 7})

# --- speech ---------------------------------------------------------------------------------------
WHISPER_LARGE_V3 = model("Whisper large-v3", "openai/whisper-large-v3", "speech", {
    "d_model": 1280, "num_mel_bins": 128, "encoder_ffn_dim": 5120, "max_source_positions": 1500,
    "activation_function": "gelu"})
WHISPER_TINY = model("Whisper tiny", "openai/whisper-tiny", "speech", {
    "d_model": 384, "vocab_size": 51865, "max_target_positions": 448})
WHISPER_SMALL = model("Whisper small", "openai/whisper-small", "speech", {
    "d_model": 768, "vocab_size": 51865, "max_target_positions": 448})
WAV2VEC2_BASE = model("wav2vec 2.0 Base (960h)", "facebook/wav2vec2-base-960h", "speech", {
    "conv_dim": [512, 512, 512, 512, 512, 512, 512], "conv_kernel": [10, 3, 3, 3, 3, 2, 2],
    "conv_stride": [5, 2, 2, 2, 2, 2, 2], "conv_bias": False})

# --- diffusion, video, multimodal, recommender ----------------------------------------------------
SDXL_VAE = model("SDXL VAE (AutoencoderKL)", "stabilityai/stable-diffusion-xl-base-1.0", "diffusion", {
    "ch": 128, "ch_mult": [1, 2, 4, 4]})
SD3_MEDIUM = model("Stable Diffusion 3 Medium (transformer)", "stabilityai/stable-diffusion-3-medium-diffusers",
                   "diffusion", {"attention_head_dim": 64, "num_attention_heads": 24, "patch_size": 2})
WAN21_1_3B = model("Wan2.1-T2V-1.3B", "Wan-AI/Wan2.1-T2V-1.3B", "video", {
    "dim": 1536, "in_dim": 16, "patch_size": [1, 2, 2], "param_dtype": "bfloat16", "vae_stride": [4, 8, 8]})
HUNYUAN_VIDEO = model("HunyuanVideo (HYVideo-T/2)", "tencent/HunyuanVideo", "video", {
    "hidden_size": 3072, "in_channels": 16, "patch_size": [1, 2, 2]})
QWEN25_VL_7B = model("Qwen2.5-VL-7B-Instruct", "Qwen/Qwen2.5-VL-7B-Instruct", "multimodal", {
    "vision_config.hidden_size": 1280, "vision_config.in_chans": 3, "vision_config.patch_size": 14,
    "vision_config.temporal_patch_size": 2, "torch_dtype": "bfloat16"})
DLRM_DCNV2 = model("DLRM-DCNv2 (MLPerf Training v3+ recommendation, Criteo 1TB multi-hot)", None, "recommender", {
    "embedding_dim": 128,
    "num_embeddings_per_feature": [40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956,
                                   405282, 10, 2209, 11938, 155, 4, 976, 14, 40000000, 40000000, 40000000, 590152,
                                   12973, 108, 36],
    "multi_hot_sizes": [3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1]})
DLRM_MLPERF = model("DLRM (MLPerf Training v0.7-v2.1 reference, Criteo Terabyte, dot interaction)", None,
                    "recommender", {"arch_sparse_feature_size": 128, "num_sparse_features": 26,
                                    "interaction": "dot", "mini_batch_size": 2048})
