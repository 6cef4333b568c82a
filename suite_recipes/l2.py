"""L2: fused blocks as they occur in real models (MLPs, attention blocks, DiT modulation, conv blocks,
MoE, MLA, recommender interaction, ...), forward and backward.

Every family is a function of a `ModelRef`; the const axes carry the model's published dimensions
(a tensor- or expert-parallel shard where a full layer would not fit the CPU budget; the description
says so). Inputs come from a generated ``make_inputs`` so weights are scaled as initialised
(std = fan_in ** -0.5): activations keep unit scale through the block and softmaxes stay soft.
References keep their working precision generic (float32, or float64 for float64 inputs), so the
evaluator's float64 golden run is a real float64 computation.

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads per problem (``draft(gpu=...)``):
training and prefill shapes of 1k-64k tokens with a few small odd ones, decode batches, native image, clip and
latent sizes (ViT-B/16 197 and 577 tokens per image, CLIP-L/14 257 and 577, DINOv2 257 and 1370, Whisper 1,500
frames per 30 s clip, SAM's 64 x 64 grid, VAE and DiT latents of 512-1024 px images, Wan's 480p latents), with
batches up to at least 400 MB of inputs and outputs and at most a few GB. ``workload.cpu.jsonl`` keeps the
recipe's 8 small workloads, each well under a second on a 2-core CPU. Attention shapes keep the float64 golden
run's score matrix under SCORE_BYTES_LIMIT (except Wan's native clips, which get a float32 golden result).
"""

from __future__ import annotations

import re
from typing import Any, Optional, Union

from suite_recipes.builder import problem, slug
from suite_recipes.shapes import grid
from suite_recipes.models import model
from suite_recipes.snippets import ACC, DLRM_INTERACT, WAN_ROPE_3D
from solbench.suite.draft import ModelRef, ProblemDraft

# --- models (values copied from solbench/suite/data/model-configs.json) ------------------------------------------

QWEN3_8B = model("Qwen3-8B", "Qwen/Qwen3-8B", "language",
                 {"hidden_size": 4096, "intermediate_size": 12288, "hidden_act": "silu",
                  "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                  "rms_norm_eps": 1e-06, "rope_theta": 1000000})
QWEN3_06B = model("Qwen3-0.6B", "Qwen/Qwen3-0.6B", "language",
                  {"hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
                   "rms_norm_eps": 1e-06, "rope_theta": 1000000})
QWEN3_17B = model("Qwen3-1.7B", "Qwen/Qwen3-1.7B", "language",
                  {"hidden_size": 2048, "intermediate_size": 6144, "hidden_act": "silu"})
MISTRAL_7B = model("Mistral-7B-v0.3", "mistralai/Mistral-7B-v0.3", "language",
                   {"hidden_size": 4096, "intermediate_size": 14336, "hidden_act": "silu",
                    "num_attention_heads": 32, "num_key_value_heads": 8, "derived.head_dim": 128,
                    "rms_norm_eps": 1e-05, "rope_theta": 1000000.0})
LLAMA_32_1B = model("Llama-3.2-1B", "meta-llama/Llama-3.2-1B", "language",
                    {"hidden_size": 2048, "intermediate_size": 8192, "hidden_act": "silu",
                     "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64})
LLAMA_31_8B = model("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "language",
                    {"hidden_size": 4096, "intermediate_size": 14336, "hidden_act": "silu"})
LLAMA_31_70B = model("Llama-3.1-70B", "meta-llama/Llama-3.1-70B", "language",
                     {"hidden_size": 8192, "rms_norm_eps": 1e-05})
QWEN25_7B = model("Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "language",
                  {"hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
                   "derived.head_dim": 128, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0})
PHI35_MINI = model("Phi-3.5-mini-instruct", "microsoft/Phi-3.5-mini-instruct", "language",
                   {"hidden_size": 3072, "rms_norm_eps": 1e-05})
GEMMA2_9B = model("Gemma-2-9B", "google/gemma-2-9b", "language",
                  {"hidden_size": 3584, "intermediate_size": 14336, "hidden_act": "gelu_pytorch_tanh"})
GEMMA3_1B = model("Gemma-3-1B-it", "google/gemma-3-1b-it", "language",
                  {"hidden_size": 1152, "intermediate_size": 6912, "hidden_act": "gelu_pytorch_tanh"})
QWEN3_30B_A3B = model("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", "language",
                      {"hidden_size": 2048, "moe_intermediate_size": 768, "num_experts": 128,
                       "num_experts_per_tok": 8, "norm_topk_prob": True})
DEEPSEEK_V2_LITE = model("DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V2-Lite", "language",
                         {"hidden_size": 2048, "moe_intermediate_size": 1408, "num_experts": 64,
                          "num_experts_per_tok": 6, "n_shared_experts": 2, "norm_topk_prob": False,
                          "routed_scaling_factor": 1.0, "num_attention_heads": 16, "kv_lora_rank": 512,
                          "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                          "rms_norm_eps": 1e-06})
DEEPSEEK_V3 = model("DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "language",
                    {"hidden_size": 7168, "num_attention_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
                     "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "rms_norm_eps": 1e-06})

VIT_L16 = model("ViT-L/16", "google/vit-large-patch16-224", "vision",
                {"hidden_size": 1024, "intermediate_size": 4096})
VIT_B16 = model("ViT-B/16", "google/vit-base-patch16-224", "vision",
                {"hidden_size": 768, "intermediate_size": 3072, "hidden_act": "gelu", "image_size": 224,
                 "patch_size": 16})
CLIP_L14 = model("CLIP ViT-L/14", "openai/clip-vit-large-patch14", "vision",
                 {"vision_config.hidden_size": 1024, "vision_config.intermediate_size": 4096,
                  "vision_config.hidden_act": "quick_gelu", "vision_config.image_size": 224,
                  "vision_config.patch_size": 14})
DINOV2_L = model("DINOv2 ViT-L/14", "facebook/dinov2-large", "vision",
                 {"hidden_size": 1024, "mlp_ratio": 4, "layer_norm_eps": 1e-06, "patch_size": 14})
DINOV2_B = model("DINOv2 ViT-B/14", "facebook/dinov2-base", "vision",
                 {"hidden_size": 768, "mlp_ratio": 4, "num_attention_heads": 12, "layer_norm_eps": 1e-06,
                  "patch_size": 14})
SWIN_T = model("Swin-T (patch4, window7, 224)", "microsoft/swin-tiny-patch4-window7-224", "vision",
               {"embed_dim": 96, "num_heads": [3, 6, 12, 24], "window_size": 7, "qkv_bias": True})
SWIN_B = model("Swin-B (patch4, window7, 224)", "microsoft/swin-base-patch4-window7-224", "vision",
               {"embed_dim": 128, "num_heads": [4, 8, 16, 32], "window_size": 7, "qkv_bias": True})
SAM_B = model("SAM ViT-B image encoder", "facebook/sam-vit-base", "vision",
              {"encoder_embed_dim": 768, "encoder_num_heads": 12, "window_size": 14, "patch_size": 16,
               "image_size": 1024, "use_rel_pos": True})
CONVNEXT_T = model("ConvNeXt-T", "facebook/convnext-tiny-224", "vision",
                   {"hidden_sizes": [96, 192, 384, 768], "dwconv_kernel_size": 7, "mlp_ratio": 4,
                    "layer_norm_eps": 1e-06})
CONVNEXT_B = model("ConvNeXt-B", "facebook/convnext-base-224", "vision",
                   {"hidden_sizes": [128, 256, 512, 1024], "dwconv_kernel_size": 7, "mlp_ratio": 4,
                    "layer_norm_eps": 1e-06})

WHISPER_LV3 = model("Whisper large-v3", "openai/whisper-large-v3", "speech",
                    {"d_model": 1280, "encoder_ffn_dim": 5120, "activation_function": "gelu",
                     "decoder_attention_heads": 20, "max_source_positions": 1500})
WHISPER_SMALL = model("Whisper small", "openai/whisper-small", "speech",
                      {"d_model": 768, "num_mel_bins": 80, "max_source_positions": 1500,
                       "encoder_attention_heads": 12, "decoder_attention_heads": 12})
WHISPER_BASE = model("Whisper base", "openai/whisper-base", "speech",
                     {"d_model": 512, "num_mel_bins": 80, "max_source_positions": 1500})
CONFORMER_L = model("Conformer-Transducer Large (~120M) encoder", None, "speech",
                    {"d_model": 512, "conv_kernel_size": 31})
FASTCONFORMER_XL = model("FastConformer XLarge (~616M) encoder", None, "speech",
                         {"d_model": 1024, "conv_kernel_size": 9, "conv_norm_type": "batch_norm"})
WAV2VEC2_BASE = model("wav2vec 2.0 Base (960h)", "facebook/wav2vec2-base-960h", "speech",
                      {"hidden_size": 768, "num_conv_pos_embeddings": 128, "num_conv_pos_embedding_groups": 16,
                       "layer_norm_eps": 1e-05})

PIXART_SIGMA = model("PixArt-Sigma XL/2 1024", "PixArt-alpha/PixArt-Sigma-XL-2-1024-MS", "diffusion",
                     {"hidden_size": 1152, "num_heads": 16, "mlp_ratio": 4.0, "model_max_length": 300})
SD35_MEDIUM = model("Stable Diffusion 3.5 Medium (transformer)", "stabilityai/stable-diffusion-3.5-medium",
                    "diffusion", {"num_attention_heads": 24, "attention_head_dim": 64})
SD3_MEDIUM = model("Stable Diffusion 3 Medium (transformer)", "stabilityai/stable-diffusion-3-medium-diffusers",
                   "diffusion", {"num_attention_heads": 24, "attention_head_dim": 64})
SD35_LARGE = model("Stable Diffusion 3.5 Large (transformer)", "stabilityai/stable-diffusion-3.5-large",
                   "diffusion", {"num_attention_heads": 38, "attention_head_dim": 64, "qk_norm": "rms_norm"})
SDXL_VAE = model("SDXL VAE (AutoencoderKL)", "stabilityai/stable-diffusion-xl-base-1.0", "diffusion",
                 {"ch": 128, "ch_mult": [1, 2, 4, 4]})
FLUX_AE = model("FLUX.1 autoencoder (ae)", "black-forest-labs/FLUX.1-dev", "diffusion",
                {"ch": 128, "ch_mult": [1, 2, 4, 4]})

WAN21_13B = model("Wan2.1-T2V-1.3B", "Wan-AI/Wan2.1-T2V-1.3B", "video",
                  {"dim": 1536, "num_heads": 12, "qk_norm": True, "eps": 1e-06, "patch_size": [1, 2, 2]})

QWEN25_VL_7B = model("Qwen2.5-VL-7B-Instruct", "Qwen/Qwen2.5-VL-7B-Instruct", "multimodal",
                     {"vision_config.hidden_size": 1280, "vision_config.out_hidden_size": 3584,
                      "vision_config.spatial_merge_size": 2})
GEMMA3_4B = model("Gemma-3-4B-it", "google/gemma-3-4b-it", "multimodal",
                  {"vision_config.hidden_size": 1152, "vision_config.image_size": 896,
                   "vision_config.patch_size": 14, "mm_tokens_per_image": 256, "text_config.hidden_size": 2560})

DLRM_TB = model("dlrm_criteo_terabyte (facebookresearch/dlrm benchmark)", None, "recommender",
                {"num_dense_features": 13, "num_sparse_features": 26, "arch_sparse_feature_size": 64,
                 "arch_mlp_bot": [13, 512, 256, 64], "test_mini_batch_size": 16384})
DLRM_MLPERF = model("DLRM (MLPerf Training v0.7-v2.1 reference, Criteo Terabyte, dot interaction)", None,
                    "recommender",
                    {"num_dense_features": 13, "num_sparse_features": 26, "arch_sparse_feature_size": 128,
                     "arch_mlp_bot": [13, 512, 256, 128], "mini_batch_size": 2048})


# --- building blocks ------------------------------------------------------------------------------------

AxisSpec = Union[int, None, str, tuple]
InputSpec = tuple


def _axes(spec: dict[str, AxisSpec]) -> dict[str, dict[str, Any]]:
    """int: const; None: var; str: expr; (value, description) for const/var/expr with a description."""
    axes = {}
    for name, value in spec.items():
        description = None
        if isinstance(value, tuple):
            value, description = value
        if value is None:
            axis: dict[str, Any] = {"type": "var"}
        elif isinstance(value, str):
            axis = {"type": "expr", "expression": value}
        else:
            axis = {"type": "const", "value": int(value)}
        if description:
            axis["description"] = description
        axes[name] = axis
    return axes


_TORCH_DTYPE = {"bfloat16": "torch.bfloat16", "float32": "torch.float32", "float16": "torch.float16",
                "int64": "torch.int64", "int32": "torch.int32", "bool": "torch.bool"}


def _make_inputs(inputs: dict[str, InputSpec]) -> str:
    """Source of make_inputs: each input is randn * std (+ mean), or a raw expression.

    Spec: (shape, dtype, std) | (shape, dtype, std, mean) | (shape, dtype, "raw python expression")
    The raw expression sees ``a`` (axes), ``shape``, ``device``, ``dt`` (torch dtype) and ``out``.
    """
    lines = ["def make_inputs(axes_and_scalars, device):", "    a = axes_and_scalars", "    out = {}"]
    for name, spec in inputs.items():
        shape, dtype = spec[0], spec[1]
        if shape is None:
            continue
        dims = ", ".join(f"a[{d!r}]" for d in shape) + ("," if len(shape) == 1 else "")
        lines.append(f"    shape = ({dims})")
        lines.append(f"    dt = {_TORCH_DTYPE[dtype]}")
        gen = spec[2]
        if isinstance(gen, str):
            lines.append(f"    out[{name!r}] = ({gen}).to(dt)")
        else:
            mean = spec[3] if len(spec) > 3 else 0.0
            text = f"torch.randn(shape, device=device) * {gen!r}"
            if mean:
                text += f" + {mean!r}"
            lines.append(f"    out[{name!r}] = ({text}).to(dt)")
    lines.append("    return out")
    return "\n".join(lines) + "\n"


Tier = Optional[list[dict[str, int]]]

_HEADER = "import math\n\nimport torch\nimport torch.nn.functional as F\n\n\n"


def shorthand(name: str, axes: dict[str, AxisSpec], inputs: dict[str, InputSpec], outputs: dict[str, tuple],
              body: str, subs: Optional[dict] = None) -> dict[str, Any]:
    """The definition fields (`catalog.builder.problem`'s axes, inputs, outputs, reference and input generator) of
    a recipe written in L2's shorthand: axes as in `_axes`, inputs as (shape, dtype, std[, mean]) or (shape,
    dtype, "raw expression") from which ``make_inputs`` is generated, outputs as (shape, dtype), and the body of
    the reference with ``@KEY@`` placeholders filled from `subs`."""
    for key, value in (subs or {}).items():
        body = body.replace(f"@{key}@", repr(value))
    if re.search(r"@[A-Z_]+@", body):
        raise ValueError(f"{name}: unsubstituted placeholder in reference")
    return {"axes": _axes(axes),
            "inputs": {k: {"shape": (list(v[0]) if v[0] is not None else None), "dtype": v[1]}
                       for k, v in inputs.items()},
            "outputs": {k: {"shape": list(v[0]), "dtype": v[1]} for k, v in outputs.items()},
            "reference": _HEADER + _make_inputs(inputs) + "\n\n" + body, "custom_inputs_entrypoint": "make_inputs"}


def draft(m: ModelRef, name: str, op_type: str, description: str, axes: dict[str, AxisSpec],
          inputs: dict[str, InputSpec], outputs: dict[str, tuple], body: str, workloads: list[dict[str, int]],
          *, backward: bool = False, scalars: Optional[dict] = None, subs: Optional[dict] = None,
          gpu: Tier = None) -> ProblemDraft:
    """`catalog.builder.problem` for an L2 recipe written in `shorthand` (kept as a name because about 140
    recipes across nine modules call it). With `gpu`, `gpu` becomes workload.jsonl and `workloads` the CPU
    tier (docs/tiers.md); a tier may repeat a size of the other (validate compares workloads within a tier)."""
    return problem("L2", m, name, op_type, description, workloads=workloads, gpu=gpu, backward=backward,
                   scalars=scalars, **shorthand(name, axes, inputs, outputs, body, subs))


def _tok(values, axis="num_tokens"):
    return [{axis: v} for v in values]




# --- the GPU tier (docs/tiers.md): upstream's scale --------------------------------------------------------
# Local sweeps, kept apart so they can move to a shared catalog/sweeps.py when the sets share one.

TRAIN_TOKENS = (3, 61, 389, 1024, 1536, 2048, 3000, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536)
"""Training / prefill token counts, 1k to 64k, with three small odd ones (a decode batch, a short prompt)."""

MOE_TOKENS_128_EXPERTS = (3, 61, 389, 1024, 1536, 2048, 3000, 4096, 6144, 8192, 12288, 16384, 20480, 24576, 28672,
                          32768)
"""TRAIN_TOKENS to 32k for a router over 128 experts: the analyzer (`solbench sol`) follows routing decided by
floating-point logits only while they have at most 4 Mi elements (sol.hybrid.REAL_LIMIT: 32768 x 128); beyond it
it would run the whole reference for real and refuses inputs above 256 MiB, so 48k and 64k tokens had no T_SOL."""

SCORE_BYTES_LIMIT = 16 * 10**9
"""Attention workloads keep batch x heads x queries x keys x 8 bytes under this: the evaluator's float64 golden run
takes the math path of scaled_dot_product_attention, which holds the whole score matrix (and a softmax copy)."""

PREFILL_SHAPES = ((1, 333), (3, 777), (1, 1024), (2, 1024), (1, 2048), (4, 1024), (1, 3000), (2, 2048), (1, 4096),
                  (8, 1024), (4, 2048), (2, 4096), (1, 6144), (1, 8192), (16, 1024), (8, 2048), (4, 4096),
                  (2, 8192), (1, 16384), (32, 1024), (16, 2048), (8, 4096), (64, 1024), (32, 2048), (96, 1024),
                  (128, 1024))
"""(batch, prompt length) candidates for prefill and training attention, by total tokens: 333 to 128k."""


def score_bytes(batch: int, heads: int, queries: int, keys: int) -> int:
    """Bytes of the float64 attention scores the golden run materialises."""
    return batch * heads * queries * keys * 8


def spread(values: list, count: int = 16) -> list:
    """`count` of `values` (ordered by size) evenly spread, the first and the last always among them."""
    if len(values) < count:
        raise ValueError(f"{len(values)} candidates for {count} workloads")
    return [values[round(i * (len(values) - 1) / (count - 1))] for i in range(count)]


def prefill(heads: int, *, limit: int = SCORE_BYTES_LIMIT, count: int = 16) -> list[dict[str, int]]:
    """`count` (batch_size, seq_len) workloads from PREFILL_SHAPES whose float64 scores fit `limit` with `heads`
    query heads: the longest prompts a golden run holds, and batches of shorter ones up to 128k tokens."""
    fits = sorted(((b, s) for b, s in PREFILL_SHAPES if score_bytes(b, heads, s, s) <= limit), key=lambda p: p[0] * p[1])
    return [{"batch_size": b, "seq_len": s} for b, s in spread(fits, count)]


def per_image(tokens_per_image: dict[int, tuple], axis: str = "num_tokens") -> list[dict[str, int]]:
    """Token counts of whole images (or clips): {tokens per image: image counts}, e.g. ViT-B/16's 197 and 577."""
    return [{axis: tokens * n} for tokens, counts in tokens_per_image.items() for n in counts]


def batches(shapes: dict[tuple, tuple], names: tuple) -> list[dict[str, int]]:
    """{(per-item axis values): batch sizes} as workloads with ``batch_size`` first, then `names`."""
    return [{"batch_size": b, **dict(zip(names, shape))} for shape, sizes in shapes.items() for b in sizes]



_HELPERS = '''
''' + ACC + '''

def _rmsnorm(x, weight, eps):
    xf = x.to(_acc(x))
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rope_tables(seq_len, dim, theta, ref):
    """cos/sin [seq_len, dim] for positions 0..seq_len-1 (Hugging Face layout: halves repeated)."""
    acc = _acc(ref)
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    freqs = torch.arange(seq_len, device=ref.device, dtype=acc)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)
'''


def body(text: str) -> str:
    return _HELPERS + "\n\n" + text


# --- MLP families ---------------------------------------------------------------------------------------

_GATED_MLP = '''@torch.no_grad()
def run(hidden_states, gate_proj, up_proj, down_proj):
    gate = F.linear(hidden_states, gate_proj)
    up = F.linear(hidden_states, up_proj)
    act = @ACT@
    return F.linear(act * up, down_proj)
'''
_ACTS = {"silu": "F.silu(gate)", "gelu_pytorch_tanh": "F.gelu(gate, approximate='tanh')"}


def gated_mlp(m: ModelRef, tp: int, token_values, *, hidden_key="hidden_size", inter_key="intermediate_size",
              act_key="hidden_act", gpu: Tier = None) -> ProblemDraft:
    hidden, inter, act = m.config[hidden_key], m.config[inter_key], m.config[act_key]
    shard = inter // tp
    kind = "swiglu" if act == "silu" else "geglu"
    tp_text = f", tensor-parallel shard TP={tp} ({inter_key} {inter} / {tp} = {shard} per rank)" if tp > 1 else ""
    return draft(
        m, f"{slug(m)}_{kind}_mlp_h{hidden}_i{shard}", f"{kind}_mlp",
        f"{m.name} gated MLP: down_proj({act}(gate_proj(x)) * up_proj(x)), {hidden_key} {hidden}, {inter_key} "
        f"{inter}{tp_text}, {act_key} {act}. Weights are nn.Linear layout [out, in], no bias.",
        {"num_tokens": (None, "tokens in the batch (batch x sequence)"), "hidden_size": (hidden, hidden_key),
         "intermediate_size": (shard, f"{inter_key} / TP={tp}")},
        {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "gate_proj": (["intermediate_size", "hidden_size"], "bfloat16", hidden ** -0.5),
         "up_proj": (["intermediate_size", "hidden_size"], "bfloat16", hidden ** -0.5),
         "down_proj": (["hidden_size", "intermediate_size"], "bfloat16", shard ** -0.5)},
        {"output": (["num_tokens", "hidden_size"], "bfloat16")},
        _GATED_MLP.replace("@ACT@", _ACTS[act]), _tok(token_values), gpu=gpu)


_GATED_MLP_BWD = '''def run(hidden_states, gate_proj, up_proj, down_proj, grad_output):
    with torch.enable_grad():
        x = hidden_states.detach().requires_grad_()
        wg = gate_proj.detach().requires_grad_()
        wu = up_proj.detach().requires_grad_()
        wd = down_proj.detach().requires_grad_()
        gate = F.linear(x, wg)
        out = F.linear(@ACT@ * F.linear(x, wu), wd)
        return torch.autograd.grad(out, (x, wg, wu, wd), grad_output)
'''


def gated_mlp_backward(m: ModelRef, tp: int, token_values, *, hidden_key="hidden_size",
                       inter_key="intermediate_size", act_key="hidden_act", gpu: Tier = None) -> ProblemDraft:
    hidden, inter, act = m.config[hidden_key], m.config[inter_key], m.config[act_key]
    shard = inter // tp
    kind = "swiglu" if act == "silu" else "geglu"
    tp_text = f", tensor-parallel shard TP={tp} ({inter_key} {inter} / {tp} = {shard})" if tp > 1 else ""
    return draft(
        m, f"{slug(m)}_{kind}_mlp_backward_h{hidden}_i{shard}", f"{kind}_mlp_backward",
        f"Backward of the {m.name} gated MLP down_proj({act}(gate_proj(x)) * up_proj(x)) ({hidden_key} {hidden}, "
        f"{inter_key} {inter}{tp_text}, {act_key} {act}): gradients of the input and of the three weights "
        "given grad_output, as in a training step (the forward activations are recomputed).",
        {"num_tokens": (None, "tokens in the micro-batch"), "hidden_size": (hidden, hidden_key),
         "intermediate_size": (shard, f"{inter_key} / TP={tp}")},
        {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "gate_proj": (["intermediate_size", "hidden_size"], "bfloat16", hidden ** -0.5),
         "up_proj": (["intermediate_size", "hidden_size"], "bfloat16", hidden ** -0.5),
         "down_proj": (["hidden_size", "intermediate_size"], "bfloat16", shard ** -0.5),
         "grad_output": (["num_tokens", "hidden_size"], "bfloat16", 1.0)},
        {"grad_hidden_states": (["num_tokens", "hidden_size"], "bfloat16"),
         "grad_gate_proj": (["intermediate_size", "hidden_size"], "bfloat16"),
         "grad_up_proj": (["intermediate_size", "hidden_size"], "bfloat16"),
         "grad_down_proj": (["hidden_size", "intermediate_size"], "bfloat16")},
        _GATED_MLP_BWD.replace("@ACT@", _ACTS[act].replace("gate", "gate")), _tok(token_values), backward=True, gpu=gpu)


_GELU_MLP = '''@torch.no_grad()
def run(hidden_states, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    h = F.linear(hidden_states, fc1_weight, fc1_bias)
    return F.linear(@ACT@, fc2_weight, fc2_bias)
'''
_GELU_ACTS = {"gelu": "F.gelu(h)", "quick_gelu": "h * torch.sigmoid(1.702 * h)",
              "gelu_pytorch_tanh": "F.gelu(h, approximate='tanh')"}


def gelu_mlp(m: ModelRef, token_values, tokens_text: str, *, hidden_key="hidden_size",
             inter_key="intermediate_size", act: str = "gelu", act_key: Optional[str] = None, gpu: Tier = None) -> ProblemDraft:
    hidden, inter = m.config[hidden_key], m.config[inter_key]
    act_text = f"{act_key} {act}" if act_key else f"{act} (the model's activation)"
    return draft(
        m, f"{slug(m)}_{act}_mlp_h{hidden}_i{inter}", "gelu_mlp",
        f"{m.name} transformer MLP fc2({act}(fc1(x))) with biases: {hidden_key} {hidden}, {inter_key} {inter}, "
        f"{act_text}. {tokens_text}",
        {"num_tokens": (None, tokens_text), "hidden_size": (hidden, hidden_key),
         "intermediate_size": (inter, inter_key)},
        {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "fc1_weight": (["intermediate_size", "hidden_size"], "bfloat16", hidden ** -0.5),
         "fc1_bias": (["intermediate_size"], "bfloat16", 0.1),
         "fc2_weight": (["hidden_size", "intermediate_size"], "bfloat16", inter ** -0.5),
         "fc2_bias": (["hidden_size"], "bfloat16", 0.1)},
        {"output": (["num_tokens", "hidden_size"], "bfloat16")},
        _GELU_MLP.replace("@ACT@", _GELU_ACTS[act]), _tok(token_values), gpu=gpu)


_GELU_MLP_BWD = '''def run(hidden_states, fc1_weight, fc1_bias, fc2_weight, grad_output):
    with torch.enable_grad():
        params = [t.detach().requires_grad_() for t in (hidden_states, fc1_weight, fc1_bias, fc2_weight)]
        x, w1, b1, w2 = params
        out = F.linear(F.gelu(F.linear(x, w1, b1)), w2)
        grads = torch.autograd.grad(out, params, grad_output)
    acc = _acc(grad_output)
    return (*grads, grad_output.to(acc).sum(0).to(grad_output.dtype))
'''


def gelu_mlp_backward(m: ModelRef, token_values, tokens_text: str, *, gpu: Tier = None) -> ProblemDraft:
    hidden, inter = m.config["hidden_size"], m.config["intermediate_size"]
    return draft(
        m, f"{slug(m)}_gelu_mlp_backward_h{hidden}_i{inter}", "gelu_mlp_backward",
        f"Backward of the {m.name} MLP fc2(gelu(fc1(x))) with biases (hidden_size {hidden}, intermediate_size "
        f"{inter}, hidden_act gelu): gradients of the input, both weights and both biases given grad_output (fc2's bias does not enter any gradient, so it is not an input). "
        f"{tokens_text}",
        {"num_tokens": (None, tokens_text), "hidden_size": (hidden, "hidden_size"),
         "intermediate_size": (inter, "intermediate_size")},
        {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "fc1_weight": (["intermediate_size", "hidden_size"], "bfloat16", hidden ** -0.5),
         "fc1_bias": (["intermediate_size"], "bfloat16", 0.1),
         "fc2_weight": (["hidden_size", "intermediate_size"], "bfloat16", inter ** -0.5),
         "grad_output": (["num_tokens", "hidden_size"], "bfloat16", 1.0)},
        {"grad_hidden_states": (["num_tokens", "hidden_size"], "bfloat16"),
         "grad_fc1_weight": (["intermediate_size", "hidden_size"], "bfloat16"),
         "grad_fc1_bias": (["intermediate_size"], "bfloat16"),
         "grad_fc2_weight": (["hidden_size", "intermediate_size"], "bfloat16"),
         "grad_fc2_bias": (["hidden_size"], "bfloat16")},
        body(_GELU_MLP_BWD), _tok(token_values), backward=True, gpu=gpu)


# --- residual add + RMSNorm -------------------------------------------------------------------------------

_ADD_RMSNORM = '''@torch.no_grad()
def run(hidden_states, residual, weight):
    acc = _acc(hidden_states)
    summed = hidden_states.to(acc) + residual.to(acc)
    new_residual = summed.to(residual.dtype)
    variance = summed.pow(2).mean(-1, keepdim=True)
    normed = (summed * torch.rsqrt(variance + @EPS@)).to(hidden_states.dtype) * weight
    return normed, new_residual
'''


def add_rmsnorm(m: ModelRef, token_values, *, gpu: Tier = None) -> ProblemDraft:
    hidden, eps = m.config["hidden_size"], m.config["rms_norm_eps"]
    return draft(
        m, f"{slug(m)}_add_rmsnorm_h{hidden}", "add_rmsnorm",
        f"{m.name} fused residual add + RMSNorm between sublayers (vLLM fused_add_rms_norm): residual = x + "
        f"residual; out = RMSNorm(residual) * weight, hidden_size {hidden}, rms_norm_eps {eps}; the sum is "
        "formed and normalised in fp32 and both the normalised output and the new residual are returned.",
        {"num_tokens": (None, "tokens in the batch"), "hidden_size": (hidden, "hidden_size")},
        {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "residual": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "weight": (["hidden_size"], "bfloat16", 0.1, 1.0)},
        {"output": (["num_tokens", "hidden_size"], "bfloat16"),
         "residual_out": (["num_tokens", "hidden_size"], "bfloat16")},
        body(_ADD_RMSNORM), _tok(token_values), subs={"EPS": eps}, gpu=gpu)


_ADD_RMSNORM_BWD = '''def run(hidden_states, residual, weight, grad_output, grad_residual_out):
    with torch.enable_grad():
        x, r, w = (t.detach().requires_grad_() for t in (hidden_states, residual, weight))
        acc = _acc(x)
        summed = x.to(acc) + r.to(acc)
        normed = (summed * torch.rsqrt(summed.pow(2).mean(-1, keepdim=True) + @EPS@)).to(x.dtype) * w
        grad_x, grad_w = torch.autograd.grad((normed, summed.to(r.dtype)), (x, w),
                                             (grad_output, grad_residual_out))
    return grad_x, grad_w
'''


def add_rmsnorm_backward(m: ModelRef, token_values, *, gpu: Tier = None) -> ProblemDraft:
    hidden, eps = m.config["hidden_size"], m.config["rms_norm_eps"]
    return draft(
        m, f"{slug(m)}_add_rmsnorm_backward_h{hidden}", "add_rmsnorm_backward",
        f"Backward of {m.name}'s fused residual add + RMSNorm (hidden_size {hidden}, rms_norm_eps {eps}): "
        "s = x + residual, outputs RMSNorm(s) * weight and s. Given the gradients of both outputs, returns the "
        "gradient of s (equal for x and residual) and of the norm weight (summed over tokens).",
        {"num_tokens": (None, "tokens in the micro-batch"), "hidden_size": (hidden, "hidden_size")},
        {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "residual": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "weight": (["hidden_size"], "bfloat16", 0.1, 1.0),
         "grad_output": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "grad_residual_out": (["num_tokens", "hidden_size"], "bfloat16", 1.0)},
        {"grad_hidden_states": (["num_tokens", "hidden_size"], "bfloat16"),
         "grad_weight": (["hidden_size"], "bfloat16")},
        body(_ADD_RMSNORM_BWD), _tok(token_values), backward=True, subs={"EPS": eps}, gpu=gpu)


# --- attention blocks -----------------------------------------------------------------------------------

_SELF_ATTN = '''@torch.no_grad()
def run(@ARGS@):
    b, s, _ = hidden_states.shape
    q = F.linear(hidden_states, q_proj@QB@).view(b, s, -1, @D@)
    k = F.linear(hidden_states, k_proj@KB@).view(b, s, -1, @D@)
    v = F.linear(hidden_states, v_proj@VB@).view(b, s, -1, @D@)
@QKNORM@    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    cos, sin = _rope_tables(s, @D@, @THETA@, hidden_states)
    q = q * cos + _rotate_half(q) * sin
    k = k * cos + _rotate_half(k) * sin
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F.linear(o.transpose(1, 2).reshape(b, s, -1), o_proj)
'''


def attention_block(m: ModelRef, tp: int, workloads, *, head_dim_key="head_dim", bias=False,
                    qk_norm=False, gpu: Tier = None) -> ProblemDraft:
    hidden, heads, kv_heads = m.config["hidden_size"], m.config["num_attention_heads"], m.config["num_key_value_heads"]
    d, theta = m.config[head_dim_key], m.config["rope_theta"]
    hq, hkv = heads // tp, kv_heads // tp
    args = ["hidden_states", "q_proj", "k_proj", "v_proj", "o_proj"]
    inputs = {"hidden_states": (["batch_size", "seq_len", "hidden_size"], "bfloat16", 1.0),
              "q_proj": (["q_dim", "hidden_size"], "bfloat16", hidden ** -0.5),
              "k_proj": (["kv_dim", "hidden_size"], "bfloat16", hidden ** -0.5),
              "v_proj": (["kv_dim", "hidden_size"], "bfloat16", hidden ** -0.5),
              "o_proj": (["hidden_size", "q_dim"], "bfloat16", (hq * d) ** -0.5)}
    if bias:
        args += ["q_bias", "k_bias", "v_bias"]
        inputs.update({"q_bias": (["q_dim"], "bfloat16", 0.1), "k_bias": (["kv_dim"], "bfloat16", 0.1),
                       "v_bias": (["kv_dim"], "bfloat16", 0.1)})
    qknorm = ""
    if qk_norm:
        args += ["q_norm", "k_norm"]
        inputs.update({"q_norm": (["head_dim"], "bfloat16", 0.1, 1.0), "k_norm": (["head_dim"], "bfloat16", 0.1, 1.0)})
        qknorm = ("    q = _rmsnorm(q, q_norm, @EPS@)\n    k = _rmsnorm(k, k_norm, @EPS@)\n")
    src = _SELF_ATTN.replace("@ARGS@", ", ".join(args)).replace("@QKNORM@", qknorm)
    for key, name in (("QB", "q_bias"), ("KB", "k_bias"), ("VB", "v_bias")):
        src = src.replace(f"@{key}@", f", {name}" if bias else "")
    extra = []
    if bias:
        extra.append("q/k/v biases (attention_bias)")
    if qk_norm:
        extra.append(f"per-head RMSNorm on q and k before RoPE (rms_norm_eps {m.config['rms_norm_eps']})")
    tp_text = f" Tensor-parallel shard TP={tp}: {hq} of {heads} query heads and {hkv} of {kv_heads} KV heads per rank." \
        if tp > 1 else ""
    name = f"{slug(m)}_{'qknorm_' if qk_norm else ''}attention_block_hq{hq}_hkv{hkv}_d{d}"
    return draft(
        m, name, "attention_block",
        f"{m.name} self-attention block for prefill: q/k/v projections, RoPE (rope_theta {theta}, rotate-half "
        f"layout, positions 0..seq_len-1), causal GQA scaled-dot-product attention with num_attention_heads "
        f"{heads}, num_key_value_heads {kv_heads}, head_dim {d}, then o_proj"
        f"{'; ' + ', '.join(extra) if extra else ''}.{tp_text}",
        {"batch_size": (None, "sequences in the batch"), "seq_len": (None, "prompt length"),
         "hidden_size": (hidden, "hidden_size"), "head_dim": (d, head_dim_key),
         "q_dim": (hq * d, f"num_attention_heads/TP x head_dim = {hq} x {d}"),
         "kv_dim": (hkv * d, f"num_key_value_heads/TP x head_dim = {hkv} x {d}")},
        inputs, {"output": (["batch_size", "seq_len", "hidden_size"], "bfloat16")},
        body(src), workloads, subs={"D": d, "THETA": float(theta), "EPS": m.config.get("rms_norm_eps", 1e-6)}, gpu=gpu)


_ATTN_BWD = '''def run(query, key, value, grad_output):
    with torch.enable_grad():
        q, k, v = (t.detach().requires_grad_() for t in (query, key, value))
        group = q.shape[1] // k.shape[1]
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1),
                                           is_causal=True)
        return torch.autograd.grad(o, (q, k, v), grad_output)
'''


def attention_backward(m: ModelRef, workloads, *, head_dim_key="head_dim", gpu: Tier = None) -> ProblemDraft:
    heads, kv_heads, d = m.config["num_attention_heads"], m.config["num_key_value_heads"], m.config[head_dim_key]
    return draft(
        m, f"{slug(m)}_gqa_attention_backward_h{heads}_kv{kv_heads}_d{d}", "attention_backward",
        f"Backward of {m.name}'s causal grouped-query attention core softmax(q k^T / sqrt({d})) v "
        f"(num_attention_heads {heads}, num_key_value_heads {kv_heads}, head_dim {d}) as in training: given "
        "q, k, v and grad_output, returns dq, dk, dv (dk/dv summed over the query heads sharing a KV head).",
        {"batch_size": (None, "sequences in the micro-batch"), "seq_len": (None, "sequence length"),
         "num_heads": (heads, "num_attention_heads"), "num_kv_heads": (kv_heads, "num_key_value_heads"),
         "head_dim": (d, head_dim_key)},
        {"query": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
         "key": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
         "value": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
         "grad_output": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16", 1.0)},
        {"grad_query": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16"),
         "grad_key": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16"),
         "grad_value": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16")},
        _ATTN_BWD, workloads, backward=True, gpu=gpu)


_WHISPER_XATTN = '''@torch.no_grad()
def run(hidden_states, encoder_hidden_states, ln_weight, ln_bias, q_proj, q_bias, k_proj, v_proj, v_bias,
        out_proj, out_bias):
    b, t, d = hidden_states.shape
    heads = @HEADS@
    x = F.layer_norm(hidden_states, (d,), ln_weight, ln_bias, 1e-05)
    q = F.linear(x, q_proj, q_bias).view(b, t, heads, -1).transpose(1, 2)
    k = F.linear(encoder_hidden_states, k_proj).view(b, -1, heads, d // heads).transpose(1, 2)
    v = F.linear(encoder_hidden_states, v_proj, v_bias).view(b, -1, heads, d // heads).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, k, v)
    return hidden_states + F.linear(o.transpose(1, 2).reshape(b, t, d), out_proj, out_bias)
'''


def whisper_cross_attention(m: ModelRef, workloads, *, gpu: Tier = None) -> ProblemDraft:
    d, heads, src = m.config["d_model"], m.config["decoder_attention_heads"], m.config["max_source_positions"]
    return draft(
        m, f"{slug(m)}_decoder_cross_attention_d{d}_h{heads}", "cross_attention",
        f"{m.name} decoder cross-attention sublayer (pre-LN): x + out_proj(attn(q_proj(LN(x)), k_proj(enc), "
        f"v_proj(enc))) over max_source_positions {src} encoder frames, d_model {d}, decoder_attention_heads "
        f"{heads}; k_proj has no bias as in Whisper. The encoder K/V projections are part of the work (first "
        "decoding step / teacher-forced prompt).",
        {"batch_size": (None, "audio clips in the batch"), "decoder_len": (None, "decoder tokens"),
         "encoder_len": (src, "max_source_positions"), "d_model": (d, "d_model")},
        {"hidden_states": (["batch_size", "decoder_len", "d_model"], "bfloat16", 1.0),
         "encoder_hidden_states": (["batch_size", "encoder_len", "d_model"], "bfloat16", 1.0),
         # Trained-scale LN weights and a peaked attention: with initialisation scales the softmax over
         # 1500 frames is nearly flat and the residual hides the attention path within tolerance.
         "ln_weight": (["d_model"], "bfloat16", 0.5, 1.0), "ln_bias": (["d_model"], "bfloat16", 0.5),
         "q_proj": (["d_model", "d_model"], "bfloat16", 2 * d ** -0.5), "q_bias": (["d_model"], "bfloat16", 0.5),
         "k_proj": (["d_model", "d_model"], "bfloat16", 2 * d ** -0.5),
         "v_proj": (["d_model", "d_model"], "bfloat16", d ** -0.5), "v_bias": (["d_model"], "bfloat16", 0.1),
         "out_proj": (["d_model", "d_model"], "bfloat16", 4 * d ** -0.5), "out_bias": (["d_model"], "bfloat16", 0.1)},
        {"output": (["batch_size", "decoder_len", "d_model"], "bfloat16")},
        _WHISPER_XATTN, workloads, subs={"HEADS": heads}, gpu=gpu)


_PIXART_BLOCK = '''def _modulate(x, shift, scale):
    return F.layer_norm(x, (x.shape[-1],), eps=1e-06) * (1 + scale) + shift


def _attention(q, k, v, heads):
    b, n, d = q.shape
    q, k, v = (t.reshape(b, -1, heads, d // heads).transpose(1, 2) for t in (q, k, v))
    return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)


@torch.no_grad()
def run(x, y, t, scale_shift_table, qkv_weight, qkv_bias, proj_weight, proj_bias, cross_q_weight, cross_q_bias,
        cross_kv_weight, cross_kv_bias, cross_proj_weight, cross_proj_bias, fc1_weight, fc1_bias, fc2_weight,
        fc2_bias):
    b, n, d = x.shape
    heads = @HEADS@
    shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = \\
        (scale_shift_table[None] + t.reshape(b, 6, d)).chunk(6, dim=1)
    q, k, v = F.linear(_modulate(x, shift_msa, scale_msa), qkv_weight, qkv_bias).chunk(3, dim=-1)
    x = x + gate_msa * F.linear(_attention(q, k, v, heads), proj_weight, proj_bias)
    q = F.linear(x, cross_q_weight, cross_q_bias)
    k, v = F.linear(y, cross_kv_weight, cross_kv_bias).chunk(2, dim=-1)
    x = x + F.linear(_attention(q, k, v, heads), cross_proj_weight, cross_proj_bias)
    h = F.gelu(F.linear(_modulate(x, shift_mlp, scale_mlp), fc1_weight, fc1_bias), approximate="tanh")
    return x + gate_mlp * F.linear(h, fc2_weight, fc2_bias)
'''


def pixart_block(m: ModelRef, workloads, *, gpu: Tier = None) -> ProblemDraft:
    d, heads, ratio, text = m.config["hidden_size"], m.config["num_heads"], m.config["mlp_ratio"], \
        m.config["model_max_length"]
    inner = int(d * ratio)
    s = d ** -0.5

    def lin(o, i, std):
        return ([o, i], "bfloat16", std)
    return draft(
        m, f"{slug(m)}_dit_block_d{d}_h{heads}", "dit_block",
        f"{m.name} transformer block (PixArtMSBlock, adaLN-single): per-block scale_shift_table [6, {d}] plus the "
        f"shared timestep embedding t [B, 6*{d}] give shift/scale/gate for attention and MLP; LayerNorm (no affine, "
        f"eps 1e-6) + modulate, self-attention ({heads} heads, hidden_size {d}), gated residual; cross-attention to "
        f"model_max_length {text} T5 caption tokens (already projected to {d}), residual; modulated GELU-tanh MLP "
        f"(mlp_ratio {ratio}) with gated residual. All caption tokens valid (no padding mask).",
        {"batch_size": (None, "images in the batch"), "num_patches": (None, "latent patches (H/16 x W/16)"),
         "caption_len": (text, "model_max_length"), "hidden_size": (d, "hidden_size"),
         "six_hidden": (6 * d, "6 x hidden_size"), "three_hidden": (3 * d, "3 x hidden_size"),
         "two_hidden": (2 * d, "2 x hidden_size"), "six": (6, "shift/scale/gate x (attention, MLP)"),
         "mlp_hidden": (inner, "hidden_size x mlp_ratio")},
        {"x": (["batch_size", "num_patches", "hidden_size"], "bfloat16", 1.0),
         "y": (["batch_size", "caption_len", "hidden_size"], "bfloat16", 1.0),
         "t": (["batch_size", "six_hidden"], "bfloat16", 0.3),
         "scale_shift_table": (["six", "hidden_size"], "bfloat16", 0.3),
         "qkv_weight": (["three_hidden", "hidden_size"], "bfloat16", s), "qkv_bias": (["three_hidden"], "bfloat16", 0.1),
         "proj_weight": (["hidden_size", "hidden_size"], "bfloat16", s), "proj_bias": (["hidden_size"], "bfloat16", 0.1),
         "cross_q_weight": (["hidden_size", "hidden_size"], "bfloat16", s),
         "cross_q_bias": (["hidden_size"], "bfloat16", 0.1),
         "cross_kv_weight": (["two_hidden", "hidden_size"], "bfloat16", s),
         "cross_kv_bias": (["two_hidden"], "bfloat16", 0.1),
         "cross_proj_weight": (["hidden_size", "hidden_size"], "bfloat16", s),
         "cross_proj_bias": (["hidden_size"], "bfloat16", 0.1),
         "fc1_weight": (["mlp_hidden", "hidden_size"], "bfloat16", s), "fc1_bias": (["mlp_hidden"], "bfloat16", 0.1),
         "fc2_weight": (["hidden_size", "mlp_hidden"], "bfloat16", inner ** -0.5),
         "fc2_bias": (["hidden_size"], "bfloat16", 0.1)},
        {"output": (["batch_size", "num_patches", "hidden_size"], "bfloat16")},
        _PIXART_BLOCK, workloads, subs={"HEADS": heads}, gpu=gpu)


_ADALN_ZERO = '''@torch.no_grad()
def run(hidden_states, temb, linear_weight, linear_bias):
    emb = F.linear(F.silu(temb), linear_weight, linear_bias)
    shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = emb.chunk(6, dim=1)
    normed = F.layer_norm(hidden_states, (hidden_states.shape[-1],), eps=1e-06)
    normed = normed * (1 + scale_msa[:, None]) + shift_msa[:, None]
    return normed, torch.stack((gate_msa, shift_mlp, scale_mlp, gate_mlp), dim=1)
'''
_ADALN_ZERO_BWD = '''def run(hidden_states, temb, linear_weight, linear_bias, grad_output):
    with torch.enable_grad():
        params = [t.detach().requires_grad_() for t in (hidden_states, temb, linear_weight, linear_bias)]
        x, c, w, bias = params
        shift, scale = F.linear(F.silu(c), w, bias).chunk(2, dim=1)
        normed = F.layer_norm(x, (x.shape[-1],), eps=1e-06) * (1 + scale[:, None]) + shift[:, None]
        return torch.autograd.grad(normed, params, grad_output)
'''


def adaln_zero(m: ModelRef, workloads, *, backward=False, gpu: Tier = None) -> ProblemDraft:
    heads, hd = m.config["num_attention_heads"], m.config["attention_head_dim"]
    d = heads * hd
    inputs = {"hidden_states": (["batch_size", "num_tokens", "dim"], "bfloat16", 1.0),
              "temb": (["batch_size", "dim"], "bfloat16", 1.0),
              "linear_weight": (["mod_dim", "dim"], "bfloat16", d ** -0.5),
              "linear_bias": (["mod_dim"], "bfloat16", 0.1)}
    axes = {"batch_size": (None, "images in the batch (x2 with classifier-free guidance)"),
            "num_tokens": (None, "image tokens (latent H/2 x W/2)"),
            "dim": (d, "num_attention_heads x attention_head_dim")}
    if backward:
        axes["mod_dim"] = (2 * d, "shift and scale rows of the modulation linear (2 x dim)")
        inputs["grad_output"] = (["batch_size", "num_tokens", "dim"], "bfloat16", 1.0)
        return draft(
            m, f"{slug(m)}_adaln_modulate_backward_d{d}", "adaln_backward",
            f"Backward of {m.name}'s AdaLayerNormZero modulation (dim = num_attention_heads {heads} x "
            f"attention_head_dim {hd} = {d}): shift, scale = Linear(SiLU(temb)); out = LayerNorm(x, no affine, "
            "eps 1e-6) * (1 + scale) + shift. Returns the gradients of x, temb, the linear weight (the shift/scale "
            "rows) and bias given grad_output, as in fine-tuning.",
            axes, inputs,
            {"grad_hidden_states": (["batch_size", "num_tokens", "dim"], "bfloat16"),
             "grad_temb": (["batch_size", "dim"], "bfloat16"),
             "grad_linear_weight": (["mod_dim", "dim"], "bfloat16"),
             "grad_linear_bias": (["mod_dim"], "bfloat16")},
            _ADALN_ZERO_BWD, workloads, backward=True, gpu=gpu)
    axes["mod_dim"] = (6 * d, "6 x dim (shift/scale/gate for attention and MLP)")
    axes["four"] = (4, "gate_msa, shift_mlp, scale_mlp, gate_mlp")
    return draft(
        m, f"{slug(m)}_adaln_zero_d{d}", "adaln",
        f"{m.name} AdaLayerNormZero (norm1 of each joint block): emb = Linear(SiLU(temb)) -> 6 x {d} chunks "
        f"(dim = num_attention_heads {heads} x attention_head_dim {hd}); out = LayerNorm(x, no affine, eps 1e-6) * "
        "(1 + scale_msa) + shift_msa; also returns gate_msa, shift_mlp, scale_mlp, gate_mlp stacked.",
        axes, inputs,
        {"norm_hidden_states": (["batch_size", "num_tokens", "dim"], "bfloat16"),
         "modulation": (["batch_size", "four", "dim"], "bfloat16")},
        _ADALN_ZERO, workloads, gpu=gpu)


_JOINT_ATTN = '''@torch.no_grad()
def run(@ARGS@):
    b, n, d = hidden_states.shape
    heads = @HEADS@
    hd = @HD@

    def split(x):
        q, k, v = x.view(x.shape[0], x.shape[1], 3, heads, hd).unbind(2)
        return q, k, v
    q, k, v = split(F.linear(hidden_states, qkv_weight, qkv_bias))
    cq, ck, cv = split(F.linear(encoder_hidden_states, add_qkv_weight, add_qkv_bias))
@QKNORM@    q = torch.cat((q, cq), dim=1).transpose(1, 2)
    k = torch.cat((k, ck), dim=1).transpose(1, 2)
    v = torch.cat((v, cv), dim=1).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, -1, heads * hd)
    image, text = o[:, :n], o[:, n:]
    return F.linear(image, out_weight, out_bias), F.linear(text, add_out_weight, add_out_bias)
'''


def joint_attention(m: ModelRef, tp: int, workloads, *, gpu: Tier = None) -> ProblemDraft:
    heads, hd = m.config["num_attention_heads"], m.config["attention_head_dim"]
    d = heads * hd
    local_heads = heads // tp
    inner = local_heads * hd
    qk_norm = m.config.get("qk_norm") == "rms_norm"
    args = ["hidden_states", "encoder_hidden_states", "qkv_weight", "qkv_bias", "add_qkv_weight", "add_qkv_bias",
            "out_weight", "out_bias", "add_out_weight", "add_out_bias"]
    s = d ** -0.5
    inputs = {"hidden_states": (["batch_size", "image_tokens", "dim"], "bfloat16", 1.0),
              "encoder_hidden_states": (["batch_size", "text_tokens", "dim"], "bfloat16", 1.0),
              "qkv_weight": (["qkv_dim", "dim"], "bfloat16", s), "qkv_bias": (["qkv_dim"], "bfloat16", 0.1),
              "add_qkv_weight": (["qkv_dim", "dim"], "bfloat16", s), "add_qkv_bias": (["qkv_dim"], "bfloat16", 0.1),
              "out_weight": (["dim", "inner_dim"], "bfloat16", inner ** -0.5),
              "out_bias": (["dim"], "bfloat16", 0.1),
              "add_out_weight": (["dim", "inner_dim"], "bfloat16", inner ** -0.5),
              "add_out_bias": (["dim"], "bfloat16", 0.1)}
    qknorm = ""
    if qk_norm:
        args += ["norm_q", "norm_k", "norm_added_q", "norm_added_k"]
        for n in ("norm_q", "norm_k", "norm_added_q", "norm_added_k"):
            inputs[n] = (["head_dim"], "bfloat16", 0.1, 1.0)
        qknorm = ("    q, k = _rmsnorm(q, norm_q, 1e-06), _rmsnorm(k, norm_k, 1e-06)\n"
                  "    cq, ck = _rmsnorm(cq, norm_added_q, 1e-06), _rmsnorm(ck, norm_added_k, 1e-06)\n")
    src = _JOINT_ATTN.replace("@ARGS@", ", ".join(args)).replace("@QKNORM@", qknorm)
    tp_text = f" Tensor-parallel shard TP={tp}: {local_heads} of {heads} heads per rank (the output projections " \
        "are row-parallel: partial sums before the all-reduce, bias added once)." if tp > 1 else ""
    return draft(
        m, f"{slug(m)}_joint_attention_h{local_heads}_d{hd}", "joint_attention",
        f"{m.name} MM-DiT joint attention: fused qkv projections for the image stream and the text (context) "
        f"stream, {'per-head RMSNorm (eps 1e-6) on q/k of both streams (qk_norm rms_norm), ' if qk_norm else ''}"
        f"attention over the concatenated [image, text] sequence (num_attention_heads {heads}, attention_head_dim "
        f"{hd}), split back and projected by to_out / to_add_out. Text tokens: 77 CLIP + 256 T5 = 333 (the pipeline "
        f"default) or 77 + 77 = 154 (max_sequence_length 77).{tp_text}",
        {"batch_size": (None, "images (x2 with classifier-free guidance)"),
         "image_tokens": (None, "latent patches (H/16 x W/16 pixels)"),
         "text_tokens": (None, "77 CLIP + T5 tokens (max_sequence_length 256 by default, 77 when shortened)"), "dim": (d, "num_attention_heads x attention_head_dim"),
         "head_dim": (hd, "attention_head_dim"), "inner_dim": (inner, "heads per rank x head_dim"),
         "qkv_dim": (3 * inner, "3 x heads per rank x head_dim")},
        inputs,
        {"output": (["batch_size", "image_tokens", "dim"], "bfloat16"),
         "context_output": (["batch_size", "text_tokens", "dim"], "bfloat16")},
        body(src), workloads, subs={"HEADS": local_heads, "HD": hd}, gpu=gpu)


# --- vision transformer pieces ----------------------------------------------------------------------------

_LS_MLP = '''@torch.no_grad()
def run(hidden_states, norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias, ls_gamma):
    h = F.layer_norm(hidden_states, (hidden_states.shape[-1],), norm_weight, norm_bias, @EPS@)
    h = F.linear(F.gelu(F.linear(h, fc1_weight, fc1_bias)), fc2_weight, fc2_bias)
    return hidden_states + ls_gamma * h
'''
_LS_MLP_BWD = '''def run(hidden_states, norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias, ls_gamma,
        grad_output):
    # Parameter gradients sum over every token: accumulate in fp32 (as mixed-precision training does);
    # a bf16 sum's result depends on the summation order, i.e. on the thread count.
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    originals = (hidden_states, norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias, ls_gamma)
    with torch.enable_grad():
        params = [t.detach().to(compute).requires_grad_() for t in originals]
        x, nw, nb, w1, b1, w2, b2, gamma = params
        h = F.layer_norm(x, (x.shape[-1],), nw, nb, @EPS@)
        out = x + gamma * F.linear(F.gelu(F.linear(h, w1, b1)), w2, b2)
        grads = torch.autograd.grad(out, params, grad_output.to(compute))
    return tuple(g.to(t.dtype) for g, t in zip(grads, originals))
'''


def layerscale_mlp(m: ModelRef, workloads, *, backward=False, gpu: Tier = None) -> ProblemDraft:
    d, ratio, eps = m.config["hidden_size"], m.config["mlp_ratio"], m.config["layer_norm_eps"]
    inner = d * ratio
    inputs = {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
              "norm_weight": (["hidden_size"], "bfloat16", 0.1, 1.0), "norm_bias": (["hidden_size"], "bfloat16", 0.1),
              "fc1_weight": (["mlp_hidden", "hidden_size"], "bfloat16", d ** -0.5),
              "fc1_bias": (["mlp_hidden"], "bfloat16", 0.1),
              "fc2_weight": (["hidden_size", "mlp_hidden"], "bfloat16", inner ** -0.5),
              "fc2_bias": (["hidden_size"], "bfloat16", 0.1),
              "ls_gamma": (["hidden_size"], "bfloat16", 0.3, 1.0)}
    axes = {"num_tokens": (None, "tokens: images x (1 + (side/14)^2)"), "hidden_size": (d, "hidden_size"),
            "mlp_hidden": (inner, "hidden_size x mlp_ratio")}
    what = (f"{m.name} encoder MLP half-block: x + ls_gamma * fc2(GELU(fc1(LayerNorm(x)))) with LayerScale "
            f"(hidden_size {d}, mlp_ratio {ratio}, layer_norm_eps {eps}).")
    if backward:
        inputs["grad_output"] = (["num_tokens", "hidden_size"], "bfloat16", 1.0)
        outs = {f"grad_{n}": (spec[0], "bfloat16") for n, spec in inputs.items() if n != "grad_output"}
        return draft(m, f"{slug(m)}_layerscale_mlp_backward_h{d}", "vit_mlp_backward",
                     "Backward of the " + what + " Returns the gradients of the input and all eight parameters "
                     "given grad_output (fine-tuning).", axes, inputs, outs, _LS_MLP_BWD, workloads, backward=True,
                     subs={"EPS": eps}, gpu=gpu)
    return draft(m, f"{slug(m)}_layerscale_mlp_h{d}", "vit_mlp", what, axes, inputs,
                 {"output": (["num_tokens", "hidden_size"], "bfloat16")}, _LS_MLP, workloads, subs={"EPS": eps}, gpu=gpu)


_LS_ATTN = '''@torch.no_grad()
def run(hidden_states, norm_weight, norm_bias, qkv_weight, qkv_bias, proj_weight, proj_bias, ls_gamma):
    b, n, d = hidden_states.shape
    heads = @HEADS@
    h = F.layer_norm(hidden_states, (d,), norm_weight, norm_bias, @EPS@)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4).unbind(0)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
    return hidden_states + ls_gamma * F.linear(o, proj_weight, proj_bias)
'''


def layerscale_attention(m: ModelRef, workloads, *, gpu: Tier = None) -> ProblemDraft:
    d, heads, eps = m.config["hidden_size"], m.config["num_attention_heads"], m.config["layer_norm_eps"]
    return draft(
        m, f"{slug(m)}_layerscale_attention_h{d}_heads{heads}", "vit_attention",
        f"{m.name} encoder attention half-block: x + ls_gamma * proj(MHSA(LayerNorm(x))) with a fused qkv "
        f"projection (hidden_size {d}, num_attention_heads {heads}, layer_norm_eps {eps}), bidirectional attention "
        f"over the CLS + patch tokens (patch_size {m.config['patch_size']}).",
        {"batch_size": (None, "images"), "num_tokens": (None, "1 + (side/14)^2 tokens per image"),
         "hidden_size": (d, "hidden_size"), "three_hidden": (3 * d, "3 x hidden_size")},
        {"hidden_states": (["batch_size", "num_tokens", "hidden_size"], "bfloat16", 1.0),
         "norm_weight": (["hidden_size"], "bfloat16", 0.1, 1.0), "norm_bias": (["hidden_size"], "bfloat16", 0.1),
         "qkv_weight": (["three_hidden", "hidden_size"], "bfloat16", d ** -0.5),
         "qkv_bias": (["three_hidden"], "bfloat16", 0.1),
         "proj_weight": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5),
         "proj_bias": (["hidden_size"], "bfloat16", 0.1), "ls_gamma": (["hidden_size"], "bfloat16", 0.3, 1.0)},
        {"output": (["batch_size", "num_tokens", "hidden_size"], "bfloat16")},
        _LS_ATTN, workloads, subs={"HEADS": heads, "EPS": eps}, gpu=gpu)


_SWIN = '''@torch.no_grad()
def run(hidden_states, qkv_weight, qkv_bias, relative_position_bias_table, proj_weight, proj_bias):
    b, height, width, c = hidden_states.shape
    ws, shift, heads = @WS@, @WS@ // 2, @HEADS@
    hd = c // heads
    n = ws * ws
    nh, nw = height // ws, width // ws
    x = torch.roll(hidden_states, shifts=(-shift, -shift), dims=(1, 2))
    x = x.view(b, nh, ws, nw, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(b * nh * nw, n, c)
    q, k, v = F.linear(x, qkv_weight, qkv_bias).view(-1, n, 3, heads, hd).permute(2, 0, 3, 1, 4).unbind(0)
    # relative position bias, as SwinSelfAttention builds relative_position_index
    coords = torch.stack(torch.meshgrid(torch.arange(ws, device=x.device), torch.arange(ws, device=x.device),
                                        indexing="ij")).flatten(1)
    rel = coords[:, :, None] - coords[:, None, :]
    index = (rel[0] + ws - 1) * (2 * ws - 1) + (rel[1] + ws - 1)
    bias = relative_position_bias_table[index.reshape(-1)].view(n, n, heads).permute(2, 0, 1)
    # shifted-window mask (SW-MSA): tokens from different regions of the rolled map do not attend
    region = torch.zeros(height, width, device=x.device, dtype=x.dtype)
    count = 0
    for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
        for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
            region[hs, wsl] = count
            count += 1
    region = region.view(nh, ws, nw, ws).permute(0, 2, 1, 3).reshape(nh * nw, n)
    mask = (region[:, None, :] != region[:, :, None]).to(x.dtype) * -100.0
    attn_mask = bias[None, None] + mask[None, :, None]
    q, k, v = (t.reshape(b, nh * nw, heads, n, hd) for t in (q, k, v))
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
    o = F.linear(o.transpose(2, 3).reshape(b * nh * nw, n, c), proj_weight, proj_bias)
    o = o.view(b, nh, nw, ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(b, height, width, c)
    return torch.roll(o, shifts=(shift, shift), dims=(1, 2))
'''


def swin_window_attention(m: ModelRef, stage: int, workloads, *, gpu: Tier = None) -> ProblemDraft:
    c = m.config["embed_dim"] * 2 ** stage
    heads, ws = m.config["num_heads"][stage], m.config["window_size"]
    return draft(
        m, f"{slug(m)}_shifted_window_attention_s{stage + 1}_c{c}_h{heads}", "window_attention",
        f"{m.name} stage {stage + 1} shifted-window attention (SW-MSA): cyclic shift by window_size//2, window "
        f"partition ({ws}x{ws}), qkv projection with bias, attention with the learned relative position bias "
        f"(table [(2*{ws}-1)^2, heads]) plus the -100 shifted-window mask, output projection, window reverse and "
        f"reverse shift. Channels embed_dim x 2^{stage} = {c}, num_heads[{stage}] = {heads}.",
        {"batch_size": (None, "images"), "height": (None, "feature-map height (multiple of window_size)"),
         "width": (None, "feature-map width (multiple of window_size)"), "channels": (c, f"embed_dim x 2^{stage}"),
         "three_channels": (3 * c, "3 x channels"), "num_heads": (heads, f"num_heads[{stage}]"),
         "table_size": ((2 * ws - 1) ** 2, "(2 x window_size - 1)^2")},
        {"hidden_states": (["batch_size", "height", "width", "channels"], "bfloat16", 1.0),
         "qkv_weight": (["three_channels", "channels"], "bfloat16", c ** -0.5),
         "qkv_bias": (["three_channels"], "bfloat16", 0.1),
         "relative_position_bias_table": (["table_size", "num_heads"], "bfloat16", 0.5),
         "proj_weight": (["channels", "channels"], "bfloat16", c ** -0.5),
         "proj_bias": (["channels"], "bfloat16", 0.1)},
        {"output": (["batch_size", "height", "width", "channels"], "bfloat16")},
        _SWIN, workloads, subs={"WS": ws, "HEADS": heads}, gpu=gpu)


_SAM = '''@torch.no_grad()
def run(hidden_states, qkv_weight, qkv_bias, rel_pos_h, rel_pos_w, proj_weight, proj_bias):
    b, height, width, c = hidden_states.shape
    ws, heads = @WS@, @HEADS@
    hd = c // heads
    pad_h, pad_w = (ws - height % ws) % ws, (ws - width % ws) % ws
    x = F.pad(hidden_states, (0, 0, 0, pad_w, 0, pad_h))
    hp, wp = height + pad_h, width + pad_w
    x = x.view(b, hp // ws, ws, wp // ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, c)
    nb = x.shape[0]
    qkv = F.linear(x, qkv_weight, qkv_bias).reshape(nb, ws * ws, 3, heads, hd).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.reshape(3, nb * heads, ws * ws, hd).unbind(0)
    attn = (q * hd ** -0.5) @ k.transpose(-2, -1)
    # decomposed relative position (SAM add_decomposed_rel_pos; table length 2*ws-1 needs no resizing)
    idx = torch.arange(ws, device=x.device)[:, None] - torch.arange(ws, device=x.device)[None, :] + (ws - 1)
    r_q = q.reshape(nb * heads, ws, ws, hd)
    rel_h = torch.einsum("bhwc,hkc->bhwk", r_q, rel_pos_h[idx])
    rel_w = torch.einsum("bhwc,wkc->bhwk", r_q, rel_pos_w[idx])
    attn = attn.view(nb * heads, ws, ws, ws, ws) + rel_h[:, :, :, :, None] + rel_w[:, :, :, None, :]
    attn = attn.view(nb * heads, ws * ws, ws * ws).softmax(dim=-1)
    o = (attn @ v).view(nb, heads, ws, ws, hd).permute(0, 2, 3, 1, 4).reshape(nb, ws, ws, c)
    o = F.linear(o, proj_weight, proj_bias)
    o = o.view(b, hp // ws, wp // ws, ws, ws, c).permute(0, 1, 3, 2, 4, 5).reshape(b, hp, wp, c)
    return o[:, :height, :width].contiguous()
'''


def sam_window_attention(m: ModelRef, workloads, *, gpu: Tier = None) -> ProblemDraft:
    c, heads, ws = m.config["encoder_embed_dim"], m.config["encoder_num_heads"], m.config["window_size"]
    hd = c // heads
    return draft(
        m, f"{slug(m)}_windowed_attention_c{c}_h{heads}_w{ws}", "window_attention",
        f"{m.name} windowed attention block body (ViTDet style): pad the patch grid to a multiple of window_size "
        f"{ws}, partition, qkv projection with bias, attention with decomposed relative position embeddings "
        f"(use_rel_pos: rel_pos_h / rel_pos_w tables of length 2*{ws}-1 over head_dim {hd}), output projection, "
        f"unpartition and crop. encoder_embed_dim {c}, encoder_num_heads {heads}; the grid is image_size/patch_size "
        f"= 64 at 1024 px.",
        {"batch_size": (None, "images"), "height": (None, "patch-grid height"), "width": (None, "patch-grid width"),
         "channels": (c, "encoder_embed_dim"), "three_channels": (3 * c, "3 x encoder_embed_dim"),
         "rel_len": (2 * ws - 1, "2 x window_size - 1"), "head_dim": (hd, "encoder_embed_dim / encoder_num_heads")},
        {"hidden_states": (["batch_size", "height", "width", "channels"], "bfloat16", 1.0),
         "qkv_weight": (["three_channels", "channels"], "bfloat16", c ** -0.5),
         "qkv_bias": (["three_channels"], "bfloat16", 0.1),
         "rel_pos_h": (["rel_len", "head_dim"], "bfloat16", 0.1),
         "rel_pos_w": (["rel_len", "head_dim"], "bfloat16", 0.1),
         "proj_weight": (["channels", "channels"], "bfloat16", c ** -0.5),
         "proj_bias": (["channels"], "bfloat16", 0.1)},
        {"output": (["batch_size", "height", "width", "channels"], "bfloat16")},
        _SAM, workloads, subs={"WS": ws, "HEADS": heads}, gpu=gpu)


# --- convolutional blocks ---------------------------------------------------------------------------------

_VAE_RESNET = '''@torch.no_grad()
def run(@ARGS@):
    h = F.silu(F.group_norm(x, 32, norm1_weight, norm1_bias, 1e-06))
    h = F.conv2d(h, conv1_weight, conv1_bias, padding=1)
    h = F.silu(F.group_norm(h, 32, norm2_weight, norm2_bias, 1e-06))
    h = F.conv2d(h, conv2_weight, conv2_bias, padding=1)
    return @SKIP@ + h
'''
_VAE_RESNET_BWD = '''def run(x, norm1_weight, norm1_bias, conv1_weight, conv1_bias, norm2_weight, norm2_bias, conv2_weight,
        grad_output):
    # conv2's bias enters no gradient but its own (the sum of grad_output), so it is not an input
    conv2_bias = torch.zeros(conv2_weight.shape[0], dtype=x.dtype, device=x.device)
    with torch.enable_grad():
        params = [t.detach().requires_grad_() for t in (x, norm1_weight, norm1_bias, conv1_weight, conv1_bias,
                                                         norm2_weight, norm2_bias, conv2_weight, conv2_bias)]
        xx, n1w, n1b, c1w, c1b, n2w, n2b, c2w, c2b = params
        h = F.conv2d(F.silu(F.group_norm(xx, 32, n1w, n1b, 1e-06)), c1w, c1b, padding=1)
        h = F.conv2d(F.silu(F.group_norm(h, 32, n2w, n2b, 1e-06)), c2w, c2b, padding=1)
        return torch.autograd.grad(xx + h, params, grad_output)
'''


def vae_resnet_block(m: ModelRef, c_in: int, c_out: int, where: str, workloads, *, backward=False,
                     gpu: Tier = None) -> ProblemDraft:
    args = ["x", "norm1_weight", "norm1_bias", "conv1_weight", "conv1_bias", "norm2_weight", "norm2_bias",
            "conv2_weight", "conv2_bias"]
    f32 = "float32"
    inputs = {"x": (["batch_size", "in_channels", "height", "width"], f32, 1.0),
              "norm1_weight": (["in_channels"], f32, 0.1, 1.0), "norm1_bias": (["in_channels"], f32, 0.1),
              "conv1_weight": (["out_channels", "in_channels", "three", "three"], f32, (9 * c_in) ** -0.5),
              "conv1_bias": (["out_channels"], f32, 0.1),
              "norm2_weight": (["out_channels"], f32, 0.1, 1.0), "norm2_bias": (["out_channels"], f32, 0.1),
              "conv2_weight": (["out_channels", "out_channels", "three", "three"], f32, (9 * c_out) ** -0.5),
              "conv2_bias": (["out_channels"], f32, 0.1)}
    skip = "x"
    if c_in != c_out:
        args += ["nin_shortcut_weight", "nin_shortcut_bias"]
        inputs["nin_shortcut_weight"] = (["out_channels", "in_channels", "one", "one"], f32, c_in ** -0.5)
        inputs["nin_shortcut_bias"] = (["out_channels"], f32, 0.1)
        skip = "F.conv2d(x, nin_shortcut_weight, nin_shortcut_bias)"
    axes = {"batch_size": (None, "images"), "height": (None, "feature-map height"),
            "width": (None, "feature-map width"), "in_channels": (c_in, where), "out_channels": (c_out, where),
            "three": (3, "3x3 kernel")}
    if c_in != c_out:
        axes["one"] = (1, "1x1 shortcut")
    what = (f"{m.name} ResnetBlock ({where}): GroupNorm(32, eps 1e-6) + SiLU + conv3x3, GroupNorm + SiLU + conv3x3, "
            f"plus the {'1x1 nin_shortcut' if c_in != c_out else 'identity'} skip; ch {m.config['ch']}, ch_mult "
            f"{m.config['ch_mult']}. fp32, as VAEs are usually run.")
    if backward:
        inputs["grad_output"] = (["batch_size", "out_channels", "height", "width"], f32, 1.0)
        outs = {f"grad_{n}": (spec[0], f32) for n, spec in inputs.items() if n != "grad_output"}
        del inputs["conv2_bias"]
        return draft(m, f"{slug(m)}_resnet_block_backward_c{c_in}", "conv_block_backward",
                     "Backward of the " + what + " Returns the gradients of the input and all parameters given "
                     "grad_output (VAE fine-tuning).", axes, inputs, outs, _VAE_RESNET_BWD, workloads, backward=True, gpu=gpu)
    src = _VAE_RESNET.replace("@ARGS@", ", ".join(args)).replace("@SKIP@", skip)
    return draft(m, f"{slug(m)}_resnet_block_c{c_in}_c{c_out}", "conv_block", what, axes, inputs,
                 {"output": (["batch_size", "out_channels", "height", "width"], f32)}, src, workloads, gpu=gpu)


_CONVNEXT = '''@torch.no_grad()
def run(x, dwconv_weight, dwconv_bias, norm_weight, norm_bias, pwconv1_weight, pwconv1_bias, pwconv2_weight,
        pwconv2_bias, layer_scale):
    c = x.shape[1]
    h = F.conv2d(x, dwconv_weight, dwconv_bias, padding=@PAD@, groups=c).permute(0, 2, 3, 1)
    h = F.layer_norm(h, (c,), norm_weight, norm_bias, @EPS@)
    h = F.linear(F.gelu(F.linear(h, pwconv1_weight, pwconv1_bias)), pwconv2_weight, pwconv2_bias)
    return x + (layer_scale * h).permute(0, 3, 1, 2)
'''
_CONVNEXT_BWD = '''def run(x, dwconv_weight, dwconv_bias, norm_weight, norm_bias, pwconv1_weight, pwconv1_bias, pwconv2_weight,
        pwconv2_bias, layer_scale, grad_output):
    with torch.enable_grad():
        params = [t.detach().requires_grad_() for t in (x, dwconv_weight, dwconv_bias, norm_weight, norm_bias,
                                                         pwconv1_weight, pwconv1_bias, pwconv2_weight, pwconv2_bias,
                                                         layer_scale)]
        xx, dw, db, nw, nb, w1, b1, w2, b2, gamma = params
        c = xx.shape[1]
        h = F.conv2d(xx, dw, db, padding=@PAD@, groups=c).permute(0, 2, 3, 1)
        h = F.linear(F.gelu(F.linear(F.layer_norm(h, (c,), nw, nb, @EPS@), w1, b1)), w2, b2)
        return torch.autograd.grad(xx + (gamma * h).permute(0, 3, 1, 2), params, grad_output)
'''


def convnext_block(m: ModelRef, stage: int, workloads, *, backward=False, gpu: Tier = None) -> ProblemDraft:
    c, k, ratio, eps = m.config["hidden_sizes"][stage], m.config["dwconv_kernel_size"], m.config["mlp_ratio"], \
        m.config["layer_norm_eps"]
    f32 = "float32"
    inputs = {"x": (["batch_size", "channels", "height", "width"], f32, 1.0),
              "dwconv_weight": (["channels", "one", "kernel", "kernel"], f32, (k * k) ** -0.5),
              "dwconv_bias": (["channels"], f32, 0.1),
              "norm_weight": (["channels"], f32, 0.1, 1.0), "norm_bias": (["channels"], f32, 0.1),
              "pwconv1_weight": (["mlp_hidden", "channels"], f32, c ** -0.5),
              "pwconv1_bias": (["mlp_hidden"], f32, 0.1),
              "pwconv2_weight": (["channels", "mlp_hidden"], f32, (ratio * c) ** -0.5),
              "pwconv2_bias": (["channels"], f32, 0.1), "layer_scale": (["channels"], f32, 0.3, 0.5)}
    axes = {"batch_size": (None, "images"), "height": (None, "feature-map height"), "width": (None, "feature-map width"),
            "channels": (c, f"hidden_sizes[{stage}]"), "one": (1, "depthwise"), "kernel": (k, "dwconv_kernel_size"),
            "mlp_hidden": (ratio * c, "mlp_ratio x channels")}
    what = (f"{m.name} stage-{stage + 1} ConvNeXt block: depthwise conv {k}x{k} (dwconv_kernel_size), channels-last "
            f"LayerNorm (layer_norm_eps {eps}), pointwise MLP {c} -> {ratio * c} -> {c} with GELU, layer scale and "
            f"residual; channels hidden_sizes[{stage}] = {c}. fp32.")
    subs = {"PAD": k // 2, "EPS": eps}
    if backward:
        inputs["grad_output"] = (["batch_size", "channels", "height", "width"], f32, 1.0)
        outs = {f"grad_{n}": (spec[0], f32) for n, spec in inputs.items() if n != "grad_output"}
        return draft(m, f"{slug(m)}_convnext_block_backward_c{c}", "conv_block_backward",
                     "Backward of the " + what + " Returns the gradients of the input and all parameters.",
                     axes, inputs, outs, _CONVNEXT_BWD, workloads, backward=True, subs=subs, gpu=gpu)
    return draft(m, f"{slug(m)}_convnext_block_c{c}", "conv_block", what, axes, inputs,
                 {"output": (["batch_size", "channels", "height", "width"], f32)}, _CONVNEXT, workloads, subs=subs, gpu=gpu)


_CONFORMER_CONV = '''@torch.no_grad()
def run(x, norm_weight, norm_bias, pointwise1_weight, pointwise1_bias, depthwise_weight, depthwise_bias,
        bn_running_mean, bn_running_var, bn_weight, bn_bias, pointwise2_weight, pointwise2_bias):
    d = x.shape[-1]
    h = F.layer_norm(x, (d,), norm_weight, norm_bias, 1e-05).transpose(1, 2)
    a, g = F.conv1d(h, pointwise1_weight, pointwise1_bias).chunk(2, dim=1)
    h = a * torch.sigmoid(g)
    # depthwise conv1d (kernel k, same padding) written as k shifted multiply-adds: the same sums, and
    # fast in float64 too (ATen's float64 depthwise convolution takes a slow path)
    t, k = h.shape[-1], depthwise_weight.shape[-1]
    padded = F.pad(h, (@PAD@, @PAD@))
    acc = depthwise_bias[None, :, None].expand_as(h)
    for j in range(k):
        acc = acc + depthwise_weight[None, :, 0, j, None] * padded[:, :, j:j + t]
    h = acc
    h = F.batch_norm(h, bn_running_mean, bn_running_var, bn_weight, bn_bias, training=False, eps=1e-05)
    h = F.conv1d(F.silu(h), pointwise2_weight, pointwise2_bias)
    return x + h.transpose(1, 2)
'''


def conformer_conv_module(m: ModelRef, workloads, frame_ms: int, *, gpu: Tier = None) -> ProblemDraft:
    d, k = m.config["d_model"], m.config["conv_kernel_size"]
    f32 = "float32"
    return draft(
        m, f"{slug(m)}_conv_module_d{d}_k{k}", "conv_block",
        f"{m.name} Conformer convolution module with its residual: LayerNorm, pointwise conv {d} -> {2 * d}, GLU, "
        f"depthwise conv1d kernel {k} (conv_kernel_size, same padding), BatchNorm (inference: running statistics), "
        f"SiLU, pointwise conv {d} -> {d}; d_model {d}. Frames are {frame_ms} ms after subsampling. fp32.",
        {"batch_size": (None, "utterances"), "num_frames": (None, f"encoder frames ({frame_ms} ms each)"),
         "d_model": (d, "d_model"), "two_d_model": (2 * d, "2 x d_model (GLU input)"), "one": (1, "pointwise"),
         "kernel": (k, "conv_kernel_size")},
        {"x": (["batch_size", "num_frames", "d_model"], f32, 1.0),
         "norm_weight": (["d_model"], f32, 0.1, 1.0), "norm_bias": (["d_model"], f32, 0.1),
         "pointwise1_weight": (["two_d_model", "d_model", "one"], f32, d ** -0.5),
         "pointwise1_bias": (["two_d_model"], f32, 0.1),
         "depthwise_weight": (["d_model", "one", "kernel"], f32, k ** -0.5),
         "depthwise_bias": (["d_model"], f32, 0.1),
         "bn_running_mean": (["d_model"], f32, 0.1), "bn_running_var": (["d_model"], f32, "torch.rand(shape, device=device) * 0.5 + 0.5"),
         "bn_weight": (["d_model"], f32, 0.1, 1.0), "bn_bias": (["d_model"], f32, 0.1),
         "pointwise2_weight": (["d_model", "d_model", "one"], f32, d ** -0.5),
         "pointwise2_bias": (["d_model"], f32, 0.1)},
        {"output": (["batch_size", "num_frames", "d_model"], f32)},
        _CONFORMER_CONV, workloads, subs={"PAD": (k - 1) // 2}, gpu=gpu)


_WHISPER_STEM = '''@torch.no_grad()
def run(input_features, conv1_weight, conv1_bias, conv2_weight, conv2_bias, embed_positions):
    h = F.gelu(F.conv1d(input_features, conv1_weight, conv1_bias, padding=1))
    h = F.gelu(F.conv1d(h, conv2_weight, conv2_bias, stride=2, padding=1))
    return h.permute(0, 2, 1) + embed_positions
'''


def whisper_conv_stem(m: ModelRef, workloads, *, gpu: Tier = None) -> ProblemDraft:
    d, mels, src = m.config["d_model"], m.config["num_mel_bins"], m.config["max_source_positions"]
    f32 = "float32"
    return draft(
        m, f"{slug(m)}_encoder_conv_stem_d{d}", "conv_block",
        f"{m.name} encoder stem: conv1d(num_mel_bins {mels} -> d_model {d}, k3, pad 1) + GELU, conv1d({d} -> {d}, "
        f"k3, stride 2, pad 1) + GELU, transpose, plus the positional embedding for max_source_positions {src} "
        "frames (30 s of audio = 3000 mel frames). fp32.",
        {"batch_size": (None, "30-second clips"), "num_mel_bins": (mels, "num_mel_bins"),
         "mel_frames": (2 * src, "2 x max_source_positions"), "d_model": (d, "d_model"),
         "positions": (src, "max_source_positions"), "kernel": (3, "conv_stem kernel_size")},
        {"input_features": (["batch_size", "num_mel_bins", "mel_frames"], f32, 1.0),
         "conv1_weight": (["d_model", "num_mel_bins", "kernel"], f32, (3 * mels) ** -0.5),
         "conv1_bias": (["d_model"], f32, 0.1),
         "conv2_weight": (["d_model", "d_model", "kernel"], f32, (3 * d) ** -0.5),
         "conv2_bias": (["d_model"], f32, 0.1),
         "embed_positions": (["positions", "d_model"], f32, 0.5)},
        {"output": (["batch_size", "positions", "d_model"], f32)},
        _WHISPER_STEM, workloads, gpu=gpu)


_W2V_POSCONV = '''@torch.no_grad()
def run(hidden_states, conv_weight, conv_bias, norm_weight, norm_bias):
    d = hidden_states.shape[-1]
    h = F.conv1d(hidden_states.transpose(1, 2), conv_weight, conv_bias, padding=@PAD@, groups=@GROUPS@)
    h = F.gelu(h[:, :, :-1]).transpose(1, 2)
    return F.layer_norm(hidden_states + h, (d,), norm_weight, norm_bias, @EPS@)
'''


def wav2vec2_pos_conv(m: ModelRef, workloads, *, gpu: Tier = None) -> ProblemDraft:
    d, k, g, eps = m.config["hidden_size"], m.config["num_conv_pos_embeddings"], \
        m.config["num_conv_pos_embedding_groups"], m.config["layer_norm_eps"]
    f32 = "float32"
    return draft(
        m, f"{slug(m)}_pos_conv_embed_d{d}_k{k}_g{g}", "conv_block",
        f"{m.name} encoder input: convolutional positional embedding (grouped conv1d, kernel "
        f"num_conv_pos_embeddings {k}, groups num_conv_pos_embedding_groups {g}, padding {k // 2}, the extra frame "
        f"of the even kernel dropped, GELU; weight norm folded into the weight), added to the features, then "
        f"LayerNorm (layer_norm_eps {eps}); hidden_size {d}, 20 ms frames. fp32.",
        {"batch_size": (None, "utterances"), "num_frames": (None, "20 ms feature frames"),
         "hidden_size": (d, "hidden_size"), "group_channels": (d // g, "hidden_size / groups"),
         "kernel": (k, "num_conv_pos_embeddings")},
        {"hidden_states": (["batch_size", "num_frames", "hidden_size"], f32, 1.0),
         "conv_weight": (["hidden_size", "group_channels", "kernel"], f32, (k * d // g) ** -0.5),
         "conv_bias": (["hidden_size"], f32, 0.1),
         "norm_weight": (["hidden_size"], f32, 0.1, 1.0), "norm_bias": (["hidden_size"], f32, 0.1)},
        {"output": (["batch_size", "num_frames", "hidden_size"], f32)},
        _W2V_POSCONV, workloads, subs={"PAD": k // 2, "GROUPS": g, "EPS": eps}, gpu=gpu)


# --- mixture of experts, MLA ------------------------------------------------------------------------------

_DISPATCHED = ("(lambda t: t.index_put_((torch.arange(shape[0], device=device), "
               "torch.randint(0, a['local_experts'], (shape[0],), device=device)), "
               "torch.full((shape[0],), 4.0, device=device), accumulate=True))(torch.randn(shape, device=device))")
_MOE = '''@torch.no_grad()
def run(@ARGS@):
    acc = _acc(hidden_states)
    probs = torch.softmax(router_logits.to(acc), dim=-1)
    topk_weight, topk_index = torch.topk(probs, @TOPK@, dim=-1)
@NORM@    topk_weight = topk_weight * @SCALE@
    out = torch.zeros(hidden_states.shape, device=hidden_states.device, dtype=acc)
    for e in range(w_gate.shape[0]):  # the experts this expert-parallel rank holds: global ids 0..E_local-1
        token, slot = torch.where(topk_index == e)
        x = hidden_states[token]
        h = F.silu(F.linear(x, w_gate[e])) * F.linear(x, w_up[e])
        y = F.linear(h, w_down[e])
        out.index_add_(0, token, y.to(acc) * topk_weight[token, slot, None])
@SHARED@    return out.to(hidden_states.dtype)
'''


def moe_block(m: ModelRef, ep: int, workloads, *, gpu: Tier = None) -> ProblemDraft:
    h, inter, experts, topk = m.config["hidden_size"], m.config["moe_intermediate_size"], m.config["num_experts"], \
        m.config["num_experts_per_tok"]
    local = experts // ep
    norm = m.config.get("norm_topk_prob", False)
    scale = float(m.config.get("routed_scaling_factor", 1.0))
    shared = m.config.get("n_shared_experts", 0)
    args = ["hidden_states", "router_logits", "w_gate", "w_up", "w_down"]
    inputs = {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
              "router_logits": (["num_tokens", "num_experts"], "float32", _DISPATCHED),
              "w_gate": (["local_experts", "moe_intermediate_size", "hidden_size"], "bfloat16", h ** -0.5),
              "w_up": (["local_experts", "moe_intermediate_size", "hidden_size"], "bfloat16", h ** -0.5),
              "w_down": (["local_experts", "hidden_size", "moe_intermediate_size"], "bfloat16", inter ** -0.5)}
    axes = {"num_tokens": (None, "tokens on this rank"), "hidden_size": (h, "hidden_size"),
            "num_experts": (experts, "num_experts"), "local_experts": (local, f"num_experts / EP={ep}"),
            "moe_intermediate_size": (inter, "moe_intermediate_size")}
    shared_src = ""
    if shared:
        args += ["shared_gate", "shared_up", "shared_down"]
        si = shared * inter
        axes["shared_intermediate_size"] = (si, "n_shared_experts x moe_intermediate_size")
        inputs.update({"shared_gate": (["shared_intermediate_size", "hidden_size"], "bfloat16", h ** -0.5),
                       "shared_up": (["shared_intermediate_size", "hidden_size"], "bfloat16", h ** -0.5),
                       "shared_down": (["hidden_size", "shared_intermediate_size"], "bfloat16", si ** -0.5)})
        shared_src = ("    shared = F.linear(F.silu(F.linear(hidden_states, shared_gate)) * "
                      "F.linear(hidden_states, shared_up), shared_down)\n    out = out + shared.to(acc)\n")
    src = _MOE.replace("@ARGS@", ", ".join(args)).replace("@SHARED@", shared_src).replace(
        "@NORM@", "    topk_weight = topk_weight / topk_weight.sum(dim=-1, keepdim=True)\n" if norm else "")
    return draft(
        m, f"{slug(m)}_moe_ep{ep}_e{local}of{experts}_top{topk}_i{inter}", "moe",
        f"{m.name} MoE layer on one expert-parallel rank (EP={ep}: experts 0..{local - 1} of num_experts {experts} "
        f"are local): softmax over the router logits, top-{topk} (num_experts_per_tok), "
        f"{'renormalised (norm_topk_prob), ' if norm else 'not renormalised (norm_topk_prob false), '}"
        f"times routed_scaling_factor {scale}; each local expert is a SwiGLU MLP (hidden_size {h}, "
        f"moe_intermediate_size {inter}) over the tokens routed to it, combined with the routing weights"
        f"{f'; plus the n_shared_experts {shared} shared experts (one SwiGLU of {shared} x {inter}) for every token' if shared else ''}. "
        "Routing is derived inside the reference from the fp32 router logits (ties have probability zero). The "
        "tokens are those dispatched to this rank: each routes to at least one local expert (the generator raises "
        "one local expert's logit by 4); remote experts' shares are added by the all-to-all combine.",
        axes, inputs, {"output": (["num_tokens", "hidden_size"], "bfloat16")},
        body(src), workloads, subs={"TOPK": topk, "SCALE": scale}, gpu=gpu)


_MLA = '''def _rope_interleaved(x, cos, sin):
    # DeepSeek's rope layout: (re, im) pairs interleaved, de-interleaved before rotate-half
    d = x.shape[-1]
    x = x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).reshape(x.shape)
    return x * cos + _rotate_half(x) * sin


@torch.no_grad()
def run(@ARGS@):
    t = hidden_states.shape[0]
    heads, nope, rope, vdim, rank = @HEADS@, @NOPE@, @ROPE@, @VDIM@, @RANK@
@QPATH@    q_nope, q_pe = q.view(t, heads, nope + rope).split([nope, rope], dim=-1)
    c_kv, k_pe = F.linear(hidden_states, kv_a_proj).split([rank, rope], dim=-1)
    c_kv = _rmsnorm(c_kv, kv_a_norm, @EPS@)
    k_nope, value = F.linear(c_kv, kv_b_proj).view(t, heads, nope + vdim).split([nope, vdim], dim=-1)
    cos, sin = cos[:, None], sin[:, None]
    q_pe = _rope_interleaved(q_pe, cos, sin)
    k_pe = _rope_interleaved(k_pe[:, None], cos, sin)
    query = torch.cat((q_nope, q_pe), dim=-1)
    key = torch.cat((k_nope, k_pe.expand(t, heads, rope)), dim=-1)
    return query, key, value.contiguous(), c_kv, k_pe[:, 0]
'''


def mla_projections(m: ModelRef, tp: int, workloads, *, gpu: Tier = None) -> ProblemDraft:
    h, heads, rank = m.config["hidden_size"], m.config["num_attention_heads"], m.config["kv_lora_rank"]
    nope, rope, vdim = m.config["qk_nope_head_dim"], m.config["qk_rope_head_dim"], m.config["v_head_dim"]
    q_rank = m.config.get("q_lora_rank")
    local = heads // tp
    args = ["hidden_states", "cos", "sin"]
    angles = "out.setdefault('_angles', (torch.randint(0, 4096, (shape[0], 1), device=device) + torch.arange(shape[0], device=device)[:, None]).double() * (10000.0 ** (-torch.arange(0, shape[1], 2, device=device).double() / shape[1])).repeat(2)[None, :shape[1]].repeat(1, 1))"
    inputs = {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
              "cos": (["num_tokens", "rope_dim"], "bfloat16", angles.replace("setdefault", "setdefault") + ".cos()"),
              "sin": (["num_tokens", "rope_dim"], "bfloat16", "out.pop('_angles').sin()")}
    axes = {"num_tokens": (None, "tokens (prefill chunk or decode batch)"), "hidden_size": (h, "hidden_size"),
            "rope_dim": (rope, "qk_rope_head_dim"), "num_heads": (local, f"num_attention_heads / TP={tp}"),
            "q_head_dim": (nope + rope, "qk_nope_head_dim + qk_rope_head_dim"), "v_head_dim": (vdim, "v_head_dim"),
            "kv_lora_rank": (rank, "kv_lora_rank"), "kv_a_dim": (rank + rope, "kv_lora_rank + qk_rope_head_dim"),
            "q_dim": (local * (nope + rope), "heads x q_head_dim"),
            "kv_b_dim": (local * (nope + vdim), "heads x (qk_nope_head_dim + v_head_dim)")}
    if q_rank:
        args += ["q_a_proj", "q_a_norm", "q_b_proj"]
        axes["q_lora_rank"] = (q_rank, "q_lora_rank")
        inputs.update({"q_a_proj": (["q_lora_rank", "hidden_size"], "bfloat16", h ** -0.5),
                       "q_a_norm": (["q_lora_rank"], "bfloat16", 0.1, 1.0),
                       "q_b_proj": (["q_dim", "q_lora_rank"], "bfloat16", q_rank ** -0.5)})
        qpath = "    q = F.linear(_rmsnorm(F.linear(hidden_states, q_a_proj), q_a_norm, @EPS@), q_b_proj)\n"
    else:
        args += ["q_proj"]
        inputs["q_proj"] = (["q_dim", "hidden_size"], "bfloat16", h ** -0.5)
        qpath = "    q = F.linear(hidden_states, q_proj)\n"
    args += ["kv_a_proj", "kv_a_norm", "kv_b_proj"]
    inputs.update({"kv_a_proj": (["kv_a_dim", "hidden_size"], "bfloat16", h ** -0.5),
                   "kv_a_norm": (["kv_lora_rank"], "bfloat16", 0.1, 1.0),
                   "kv_b_proj": (["kv_b_dim", "kv_lora_rank"], "bfloat16", rank ** -0.5)})
    src = _MLA.replace("@ARGS@", ", ".join(args)).replace("@QPATH@", qpath)
    tp_text = f" Tensor-parallel shard TP={tp}: {local} of {heads} heads per rank (the down projections are " \
        "replicated)." if tp > 1 else ""
    return draft(
        m, f"{slug(m)}_mla_projections_h{local}_r{rank}", "mla",
        f"{m.name} multi-head latent attention input projections: "
        f"{f'q = q_b_proj(RMSNorm(q_a_proj(x))) (q_lora_rank {q_rank})' if q_rank else 'q = q_proj(x) (no q compression)'}"
        f", split into nope ({nope}) and rope ({rope}) parts; kv_a_proj(x) -> compressed c_kv (kv_lora_rank {rank}) "
        f"+ shared k_pe ({rope}); RMSNorm (rms_norm_eps {m.config['rms_norm_eps']}) on c_kv; kv_b_proj -> k_nope and "
        f"v (v_head_dim {vdim}); RoPE on q_pe and k_pe in DeepSeek's interleaved layout from the given cos/sin tables "
        f"(the yarn tables of the model, here of random positions). Returns q, k (k_pe broadcast over heads), v and "
        f"the latent cache entries (normalised c_kv, rotated k_pe).{tp_text}",
        axes, inputs,
        {"query": (["num_tokens", "num_heads", "q_head_dim"], "bfloat16"),
         "key": (["num_tokens", "num_heads", "q_head_dim"], "bfloat16"),
         "value": (["num_tokens", "num_heads", "v_head_dim"], "bfloat16"),
         "compressed_kv": (["num_tokens", "kv_lora_rank"], "bfloat16"),
         "k_pe": (["num_tokens", "rope_dim"], "bfloat16")},
        body(src), workloads,
        subs={"HEADS": local, "NOPE": nope, "ROPE": rope, "VDIM": vdim, "RANK": rank, "EPS": m.config["rms_norm_eps"]}, gpu=gpu)


# --- recommender --------------------------------------------------------------------------------------------

_DLRM = DLRM_INTERACT + '''

@torch.no_grad()
def run(dense_features, sparse_embeddings, bot_w0, bot_b0, bot_w1, bot_b1, bot_w2, bot_b2):
    x = torch.relu(F.linear(dense_features, bot_w0, bot_b0))
    x = torch.relu(F.linear(x, bot_w1, bot_b1))
    x = torch.relu(F.linear(x, bot_w2, bot_b2))
    return _interact(x, sparse_embeddings)
'''
_DLRM_BWD = DLRM_INTERACT + '''

def run(dense_features, sparse_embeddings, bot_w0, bot_b0, bot_w1, bot_b1, bot_w2, bot_b2, grad_output):
    with torch.enable_grad():
        params = [t.detach().requires_grad_() for t in (sparse_embeddings, bot_w0, bot_b0, bot_w1, bot_b1, bot_w2,
                                                         bot_b2)]
        emb, w0, b0, w1, b1, w2, b2 = params
        x = torch.relu(F.linear(dense_features, w0, b0))
        x = torch.relu(F.linear(x, w1, b1))
        x = torch.relu(F.linear(x, w2, b2))
        return torch.autograd.grad(_interact(x, emb), params, grad_output)
'''


def dlrm_interaction(m: ModelRef, workloads, *, backward=False, gpu: Tier = None) -> ProblemDraft:
    dense, sparse, dim, bot = m.config["num_dense_features"], m.config["num_sparse_features"], \
        m.config["arch_sparse_feature_size"], m.config["arch_mlp_bot"]
    pairs = (sparse + 1) * sparse // 2
    f32 = "float32"
    inputs = {"dense_features": (["batch_size", "num_dense_features"], f32, 1.0),
              "sparse_embeddings": (["batch_size", "num_sparse_features", "embedding_dim"], f32, 0.3)}
    for i, (a, b) in enumerate(zip(bot[:-1], bot[1:])):
        names = {0: "num_dense_features", len(bot) - 1: "embedding_dim"}
        ia, ib = names.get(i, f"bot_{i}"), names.get(i + 1, f"bot_{i + 1}")
        inputs[f"bot_w{i}"] = ([ib, ia], f32, (2.0 / a) ** 0.5)
        inputs[f"bot_b{i}"] = ([ib], f32, 0.1)
    axes = {"batch_size": (None, "samples"), "num_dense_features": (dense, "num_dense_features"),
            "num_sparse_features": (sparse, "num_sparse_features"), "embedding_dim": (dim, "arch_sparse_feature_size"),
            "bot_1": (bot[1], "arch_mlp_bot[1]"), "bot_2": (bot[2], "arch_mlp_bot[2]"),
            "out_dim": (dim + pairs, f"embedding_dim + {sparse + 1} choose 2")}
    what = (f"{m.name} bottom MLP + dot interaction: ReLU MLP arch_mlp_bot {bot} over the num_dense_features "
            f"{dense} dense features, stacked with the num_sparse_features {sparse} pooled embeddings "
            f"(arch_sparse_feature_size {dim}), all pairwise dot products (bmm), the strictly lower triangle "
            f"({pairs} values) concatenated after the bottom-MLP output. fp32.")
    if backward:
        inputs["grad_output"] = (["batch_size", "out_dim"], f32, 1.0)
        outs = {f"grad_{n}": (spec[0], f32) for n, spec in inputs.items() if n not in ("grad_output", "dense_features")}
        return draft(m, f"{slug(m)}_bottom_mlp_interaction_backward_d{dim}", "dlrm_interaction_backward",
                     "Backward of the " + what + " Returns the gradients of the pooled embeddings (for the "
                     "embedding update) and of the bottom-MLP weights and biases given the gradient of the "
                     "interaction output (training step).", axes, inputs, outs, _DLRM_BWD, workloads, backward=True, gpu=gpu)
    return draft(m, f"{slug(m)}_bottom_mlp_interaction_d{dim}", "dlrm_interaction", what, axes, inputs,
                 {"output": (["batch_size", "out_dim"], f32)}, _DLRM, workloads, gpu=gpu)


# --- video, multimodal --------------------------------------------------------------------------------------

_WAN_ATTN = WAN_ROPE_3D + '''

@torch.no_grad()
def run(x, q_weight, q_bias, k_weight, k_bias, v_weight, v_bias, o_weight, o_bias, norm_q_weight, norm_k_weight):
    b, f, hh, ww, d = x.shape
    heads = @HEADS@
    x = x.reshape(b, f * hh * ww, d)
    s = x.shape[1]
    q = _rmsnorm(F.linear(x, q_weight, q_bias), norm_q_weight, @EPS@).view(b, s, heads, -1)
    k = _rmsnorm(F.linear(x, k_weight, k_bias), norm_k_weight, @EPS@).view(b, s, heads, -1)
    v = F.linear(x, v_weight, v_bias).view(b, s, heads, -1)
    q, k = _rope_3d(q, f, hh, ww), _rope_3d(k, f, hh, ww)
    o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    o = F.linear(o.transpose(1, 2).reshape(b, s, d), o_weight, o_bias)
    return o.view(b, f, hh, ww, d)
'''


def wan_self_attention(m: ModelRef, workloads, *, gpu: Tier = None) -> ProblemDraft:
    d, heads, eps = m.config["dim"], m.config["num_heads"], m.config["eps"]
    hd = d // heads
    s = d ** -0.5
    inputs = {"x": (["batch_size", "frames", "height", "width", "dim"], "bfloat16", 1.0)}
    for n in ("q", "k", "v", "o"):
        inputs[f"{n}_weight"] = (["dim", "dim"], "bfloat16", s)
        inputs[f"{n}_bias"] = (["dim"], "bfloat16", 0.1)
    inputs["norm_q_weight"] = (["dim"], "bfloat16", 0.1, 1.0)
    inputs["norm_k_weight"] = (["dim"], "bfloat16", 0.1, 1.0)
    c = hd // 2
    return draft(
        m, f"{slug(m)}_3d_rope_self_attention_d{d}_h{heads}", "attention_block",
        f"{m.name} DiT self-attention over video latent patches: q/k/v projections with bias, RMSNorm over the full "
        f"dim on q and k (qk_norm, eps {eps}), 3-D RoPE (head_dim/2 = {c} frequency pairs split "
        f"{c - 2 * (c // 3)}/{c // 3}/{c // 3} over frame/height/width, theta 10000, interleaved pairs), "
        f"bidirectional attention (num_heads {heads}, dim {d}), output projection. The grid is latent frames x "
        f"(H/16) x (W/16) after patch_size {m.config['patch_size']}; small clips.",
        {"batch_size": (None, "videos"), "frames": (None, "latent frames"), "height": (None, "patch rows"),
         "width": (None, "patch columns"), "dim": (d, "dim")},
        inputs, {"output": (["batch_size", "frames", "height", "width", "dim"], "bfloat16")},
        body(_WAN_ATTN), workloads, subs={"HEADS": heads, "EPS": eps}, gpu=gpu)


_QWEN_VL_MERGER = '''@torch.no_grad()
def run(hidden_states, ln_q_weight, mlp0_weight, mlp0_bias, mlp2_weight, mlp2_bias):
    x = _rmsnorm(hidden_states, ln_q_weight, 1e-06).view(-1, mlp0_weight.shape[1])
    return F.linear(F.gelu(F.linear(x, mlp0_weight, mlp0_bias)), mlp2_weight, mlp2_bias)
'''


def qwen_vl_merger(m: ModelRef, workloads, *, gpu: Tier = None) -> ProblemDraft:
    d, out, merge = m.config["vision_config.hidden_size"], m.config["vision_config.out_hidden_size"], \
        m.config["vision_config.spatial_merge_size"]
    inner = d * merge * merge
    return draft(
        m, f"{slug(m)}_patch_merger_d{d}_out{out}", "vision_projector",
        f"{m.name} vision-to-language patch merger: RMSNorm (eps 1e-6) over the vision hidden_size {d}, "
        f"spatial_merge_size^2 = {merge * merge} neighbouring patches concatenated ({inner}), Linear {inner} -> "
        f"{inner} + GELU, Linear -> out_hidden_size {out} (the language model's hidden size).",
        {"num_merged": (None, "merged visual tokens sent to the language model"),
         "num_patches": ("num_merged * 4", "vision patches = num_merged x spatial_merge_size^2"),
         "hidden_size": (d, "vision_config.hidden_size"), "merged_dim": (inner, "hidden_size x merge^2"),
         "out_hidden_size": (out, "vision_config.out_hidden_size")},
        {"hidden_states": (["num_patches", "hidden_size"], "bfloat16", 1.0),
         "ln_q_weight": (["hidden_size"], "bfloat16", 0.1, 1.0),
         "mlp0_weight": (["merged_dim", "merged_dim"], "bfloat16", inner ** -0.5),
         "mlp0_bias": (["merged_dim"], "bfloat16", 0.1),
         "mlp2_weight": (["out_hidden_size", "merged_dim"], "bfloat16", inner ** -0.5),
         "mlp2_bias": (["out_hidden_size"], "bfloat16", 0.1)},
        {"output": (["num_merged", "out_hidden_size"], "bfloat16")},
        body(_QWEN_VL_MERGER), workloads, gpu=gpu)


_GEMMA3_PROJ = '''@torch.no_grad()
def run(vision_outputs, mm_soft_emb_norm_weight, mm_input_projection_weight):
    b, n, d = vision_outputs.shape
    side, pooled = @SIDE@, @POOLED@
    k = side // pooled
    x = vision_outputs.view(b, pooled, k, pooled, k, d).mean(dim=(2, 4)).reshape(b, pooled * pooled, d)
    xf = x.to(_acc(x))
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-06) * (1.0 + mm_soft_emb_norm_weight.to(xf.dtype))
    return torch.matmul(xf.to(x.dtype), mm_input_projection_weight)
'''


def gemma3_projector(m: ModelRef, workloads, *, gpu: Tier = None) -> ProblemDraft:
    d, size, patch = m.config["vision_config.hidden_size"], m.config["vision_config.image_size"], \
        m.config["vision_config.patch_size"]
    tokens, text = m.config["mm_tokens_per_image"], m.config["text_config.hidden_size"]
    side = size // patch
    pooled = int(round(tokens ** 0.5))
    return draft(
        m, f"{slug(m)}_mm_projector_d{d}_to{text}", "vision_projector",
        f"{m.name} multimodal projector: the SigLIP patch grid ({size}/{patch} = {side} per side, vision hidden_size "
        f"{d}) average-pooled to mm_tokens_per_image {tokens} ({pooled}x{pooled}), Gemma RMSNorm (weight as 1 + w, "
        f"eps 1e-6), projected to the text hidden_size {text}.",
        {"num_images": (None, "images / pan-and-scan crops"), "num_patches": (side * side, f"({size}/{patch})^2"),
         "vision_hidden": (d, "vision_config.hidden_size"), "mm_tokens": (tokens, "mm_tokens_per_image"),
         "text_hidden": (text, "text_config.hidden_size")},
        {"vision_outputs": (["num_images", "num_patches", "vision_hidden"], "bfloat16", 1.0),
         "mm_soft_emb_norm_weight": (["vision_hidden"], "bfloat16", 0.1),
         "mm_input_projection_weight": (["vision_hidden", "text_hidden"], "bfloat16", d ** -0.5)},
        {"output": (["num_images", "mm_tokens", "text_hidden"], "bfloat16")},
        body(_GEMMA3_PROJ), workloads, subs={"SIDE": side, "POOLED": pooled}, gpu=gpu)


# --- the set ------------------------------------------------------------------------------------------------

_VIT_TOKENS = (197, 394, 591, 985, 1000, 1576, 255, 64)
_BS = grid  # shorthand


def drafts() -> list[ProblemDraft]:
    """Each problem's first workload list is its CPU tier (today's small sizes), ``gpu=`` its GPU tier."""
    big = (1, 7, 32, 64, 128, 255, 384, 512)
    mid = (1, 7, 32, 128, 255, 400, 512, 777)
    train = _tok(TRAIN_TOKENS)
    hw = ("height", "width")
    # DiT joint attention over [image, text]: 512 / 768 / 1024 px and a 1024 x 768 landscape (latent/16 patches),
    # 154 or 333 text tokens; batches up to the float64 golden run's score bound with 24 heads
    joint = batches({(1024, 154): (1, 8, 32), (1024, 333): (2, 16, 44), (2304, 333): (1, 4, 8), (4096, 154): (1, 2),
                     (4096, 333): (1, 2, 4), (3072, 333): (1, 2)}, ("image_tokens", "text_tokens"))
    whisper_decode = batches({(1,): (12, 16, 24, 32, 48, 64, 96, 128, 192, 256),
                              (448,): (1, 4, 64), (224,): (8,), (128,): (16,), (64,): (32,)}, ("decoder_len",))
    return [
        # MLPs
        gated_mlp(QWEN3_8B, 4, big, gpu=train),
        # Mistral-7B and Gemma-2-9B TP=8 MLPs, ViT-L/16's GELU MLP (= CLIP's quick-GELU one within the tolerance)
        # and Llama-3.1-8B's TP=8 MLP backward are the extracted L2 problems' computations: not repeated here.
        gelu_mlp(WHISPER_LV3, (1500, 750, 1200, 100, 1, 448, 1024, 255), "Tokens: encoder frames (1500 per 30 s clip) "
                 "or decoder tokens.", hidden_key="d_model", inter_key="encoder_ffn_dim", act_key="activation_function",
                 gpu=_tok((5, 24, 96, 896)) + per_image({1500: (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96)})),
        gelu_mlp(CLIP_L14, (257, 514, 771, 1028, 1285, 64, 1, 1542), "Tokens: images x 257 (224 px: 256 patches + "
                 "CLS), or x 577 at 336 px (the ViT-L/14-336 checkpoint of the same tower).",
                 hidden_key="vision_config.hidden_size", inter_key="vision_config.intermediate_size", act="quick_gelu",
                 act_key="vision_config.hidden_act",
                 gpu=per_image({257: (8, 16, 32, 64, 128, 256, 384, 512), 577: (1, 2, 4, 8, 16, 32, 64, 128)})),
        gated_mlp_backward(QWEN3_17B, 1, (8, 16, 32, 48, 64, 100, 128, 160), gpu=train),
        gated_mlp_backward(GEMMA3_1B, 1, (8, 16, 64, 100, 128, 200, 255, 256), gpu=train),
        gelu_mlp_backward(VIT_B16, (197, 394, 512, 788, 985, 1000, 100, 64), "Tokens: batch x 197 (224 px: 196 "
                          "patches + CLS), or x 577 at 384 px.",
                          gpu=per_image({197: (8, 16, 32, 64, 128, 256, 384, 512), 577: (1, 2, 4, 8, 16, 32, 64, 128)})),
        # residual + norm
        add_rmsnorm(LLAMA_31_70B, (1, 7, 32, 128, 255, 512, 1024, 2048), gpu=train),
        add_rmsnorm(QWEN25_7B, (1, 3, 16, 100, 256, 1000, 2048, 4096), gpu=train),
        add_rmsnorm_backward(MISTRAL_7B, (16, 64, 128, 255, 512, 1000, 2048, 4096), gpu=train),
        add_rmsnorm_backward(PHI35_MINI, (16, 64, 128, 255, 512, 1000, 2048, 4096), gpu=train),
        # attention
        attention_block(QWEN25_7B, 1, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 33, 64, 128, 100, 255, 200, 384)),
                        head_dim_key="derived.head_dim", bias=True, gpu=prefill(28)),
        attention_block(MISTRAL_7B, 4, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1000)),
                        head_dim_key="derived.head_dim", gpu=prefill(8)),
        attention_block(QWEN3_06B, 1, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1024)),
                        qk_norm=True, gpu=prefill(16)),
        attention_block(QWEN3_8B, 4, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1000)),
                        qk_norm=True, gpu=prefill(8)),
        attention_backward(LLAMA_32_1B, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1024)),
                           gpu=prefill(32)),
        attention_backward(QWEN3_06B, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 768)),
                           gpu=prefill(16)),
        whisper_cross_attention(WHISPER_SMALL, grid(batch_size=(1, 2, 4, 1, 8, 1, 2, 3), decoder_len=(1, 1, 1, 4, 1, 32, 64, 100)),
                                gpu=whisper_decode),
        # diffusion / DiT
        pixart_block(PIXART_SIGMA, grid(batch_size=(1, 2, 1, 2, 1, 1, 2, 1), num_patches=(64, 64, 256, 256, 576, 900, 400, 768)),
                     gpu=batches({(1024,): (1, 4, 16, 32, 64, 96), (2304,): (1, 8), (3072,): (1,), (4032,): (1, 2),
                                  (4096,): (1, 2, 4, 6, 7)}, ("num_patches",))),
        adaln_zero(SD35_MEDIUM, grid(batch_size=(1, 2, 2, 1, 2, 4, 2, 1), num_tokens=(64, 256, 1024, 4096, 4096, 1024, 2304, 1536)),
                   gpu=batches({(1024,): (1, 8, 32), (2304,): (1, 4, 16), (3600,): (2,), (4096,): (4, 8, 16, 32),
                                (8100,): (1, 2, 8)}, ("num_tokens",)) + [{"batch_size": 2, "num_tokens": 1024},
                                                                          {"batch_size": 1, "num_tokens": 4096}]),
        adaln_zero(SD35_MEDIUM, grid(batch_size=(1, 2, 2, 1, 2, 4, 2, 1), num_tokens=(64, 256, 1024, 4096, 2048, 1024, 1536, 1536)),
                   backward=True,
                   gpu=batches({(1024,): (1, 2, 8, 32), (2304,): (1, 4, 16), (3600,): (2,), (4096,): (1, 4, 8, 24),
                                (8100,): (1, 2, 4, 8)}, ("num_tokens",))),
        joint_attention(SD3_MEDIUM, 1, grid(batch_size=(1, 2, 1, 1, 2, 1, 1, 1), image_tokens=(64, 64, 256, 256, 256, 576, 1024, 768),
                                            text_tokens=(154, 154, 154, 333, 333, 333, 154, 333)), gpu=joint),
        joint_attention(SD35_LARGE, 2, grid(batch_size=(1, 2, 1, 1, 2, 1, 1, 1), image_tokens=(64, 64, 256, 256, 256, 576, 1024, 768),
                                            text_tokens=(154, 154, 154, 333, 333, 333, 154, 333)), gpu=joint),
        # vision
        layerscale_mlp(DINOV2_L, _tok((257, 514, 1370, 785, 1028, 1542, 64, 1)),
                       gpu=per_image({257: (8, 16, 32, 64, 128, 256, 384, 512), 1370: (2, 3, 4, 8, 16, 32, 64, 96)})),
        layerscale_mlp(DINOV2_B, _tok((257, 514, 1370, 785, 1028, 100, 64, 900)), backward=True,
                       gpu=per_image({257: (8, 16, 32, 64, 128, 256, 384, 512), 1370: (2, 3, 4, 8, 16, 32, 64, 96)})),
        layerscale_attention(DINOV2_B, grid(batch_size=(1, 2, 4, 1, 8, 1, 2, 1), num_tokens=(257, 257, 257, 785, 257, 1370, 785, 1025)),
                             gpu=batches({(257,): (16, 32, 64, 128, 256, 512, 768), (785,): (4, 64),
                                          (1370,): (2, 4, 8, 16, 32, 64, 80)}, ("num_tokens",))),
        swin_window_attention(SWIN_T, 0, grid(batch_size=(1, 1, 2, 1, 4, 8, 1, 2), height=(14, 28, 28, 56, 56, 56, 84, 56),
                                              width=(14, 28, 28, 56, 56, 56, 84, 112)),
                              gpu=batches({(56, 56): (2, 3, 16, 32, 64, 128, 256, 384, 512),
                                           (112, 112): (1, 2, 4, 16, 32, 64, 128)}, hw)),
        swin_window_attention(SWIN_B, 2, grid(batch_size=(1, 2, 4, 8, 16, 1, 1, 2), height=(14, 14, 14, 14, 14, 28, 42, 28),
                                              width=(14, 14, 14, 14, 14, 28, 56, 42)),
                              gpu=batches({(14, 14): (32, 64, 128, 256, 512, 768, 1024, 1536),
                                           (28, 28): (2, 4, 8, 16, 32, 64, 128, 256)}, hw)),
        sam_window_attention(SAM_B, grid(batch_size=(1, 1, 1, 1, 2, 1, 1, 2), height=(14, 20, 32, 48, 32, 64, 40, 40),
                                         width=(14, 30, 32, 48, 32, 64, 60, 40)),
                             gpu=batches({(64, 64): (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80)}, hw)),
        convnext_block(CONVNEXT_T, 1, grid(batch_size=(1, 2, 4, 8, 16, 1, 1, 2), height=(28, 28, 28, 28, 28, 48, 64, 40),
                                           width=(28, 28, 28, 28, 28, 48, 64, 60)),
                       gpu=batches({(28, 28): (32, 64, 96, 128, 192, 256, 384, 512),
                                    (56, 56): (1, 2, 4, 8, 16, 32, 64, 128)}, hw)),
        convnext_block(CONVNEXT_B, 2, grid(batch_size=(1, 2, 4, 8, 1, 2, 1, 3), height=(14, 14, 14, 14, 24, 24, 32, 14),
                                           width=(14, 14, 14, 14, 24, 24, 32, 14)), backward=True,
                       gpu=batches({(14, 14): (16, 32, 64, 128, 256, 384, 512), (24, 24): (4, 8, 16, 32, 64, 128, 192),
                                    (28, 28): (16, 64)}, hw)),
        vae_resnet_block(SDXL_VAE, 512, 512, "decoder mid / up block, ch x ch_mult[-1] = 512 channels",
                         grid(batch_size=(1, 1, 1, 2, 1, 1, 1, 2), height=(8, 16, 24, 16, 32, 40, 48, 32),
                              width=(8, 16, 24, 16, 32, 40, 48, 32)),
                         gpu=batches({(64, 64): (1, 4, 16), (96, 96): (2, 8), (128, 128): (1, 2, 3, 4, 6, 8),
                                      (128, 96): (1, 4), (96, 160): (2,), (256, 256): (1, 2)}, hw)),
        vae_resnet_block(FLUX_AE, 512, 256, "decoder up block 512 -> ch x ch_mult[1] = 256 channels",
                         grid(batch_size=(1, 1, 1, 2, 1, 1, 1, 2), height=(16, 32, 48, 32, 64, 40, 64, 48),
                              width=(16, 32, 48, 32, 64, 72, 96, 48)),
                         gpu=batches({(128, 128): (1, 2, 4, 8), (256, 256): (1, 2, 4), (256, 384): (1,),
                                      (384, 384): (1, 2), (512, 384): (1, 2), (512, 512): (1, 2, 4), (768, 768): (1,)}, hw)),
        vae_resnet_block(SDXL_VAE, 128, 128, "encoder/decoder full-resolution block, ch = 128 channels",
                         grid(batch_size=(1, 1, 1, 2, 1, 1, 1, 2), height=(16, 32, 48, 32, 64, 80, 96, 64),
                              width=(16, 32, 48, 32, 64, 80, 96, 64)), backward=True,
                         gpu=batches({(128, 128): (1, 4, 16), (256, 256): (1, 2, 4, 8), (384, 384): (1, 2),
                                      (512, 512): (1, 2, 4), (768, 768): (1,), (1024, 768): (1,), (1024, 1024): (1, 2)}, hw)),
        # speech
        conformer_conv_module(CONFORMER_L, grid(batch_size=(1, 1, 2, 4, 1, 8, 2, 4), num_frames=(25, 100, 250, 250, 750, 250, 500, 375)), 40,
                              gpu=batches({(250,): (16, 32, 64, 128, 256), (750,): (2, 8, 16, 32, 64, 128),
                                           (1500,): (1, 4, 16, 32, 80)}, ("num_frames",))),
        conformer_conv_module(FASTCONFORMER_XL, grid(batch_size=(1, 1, 2, 4, 1, 8, 2, 4), num_frames=(13, 50, 125, 125, 375, 125, 250, 188)), 80,
                              gpu=batches({(125,): (16, 32, 64, 128, 256), (375,): (2, 8, 16, 32, 64, 128),
                                           (750,): (1, 4, 16, 48, 80)}, ("num_frames",))),
        whisper_conv_stem(WHISPER_BASE, _tok((1, 2, 3, 4, 5, 6, 7, 8), "batch_size"),
                          gpu=_tok((1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192, 224, 256), "batch_size")),
        whisper_cross_attention(WHISPER_LV3, grid(batch_size=(1, 2, 1, 1, 2, 1, 3, 4), decoder_len=(1, 1, 4, 32, 16, 100, 1, 1)),
                                gpu=whisper_decode),
        # MoE, MLA
        moe_block(QWEN3_30B_A3B, 16, _tok((1, 4, 16, 64, 128, 255, 512, 1000)), gpu=_tok(MOE_TOKENS_128_EXPERTS)),
        moe_block(DEEPSEEK_V2_LITE, 16, _tok((1, 4, 16, 64, 128, 255, 384, 512)), gpu=train),
        mla_projections(DEEPSEEK_V2_LITE, 1, _tok((1, 4, 16, 64, 128, 255, 512, 1024)), gpu=train),
        mla_projections(DEEPSEEK_V3, 8, _tok((1, 4, 16, 64, 128, 255, 384, 512)), gpu=train),
        # recommender
        dlrm_interaction(DLRM_TB, _tok((1, 16, 128, 512, 1000, 2048, 4096, 16384), "batch_size"),
                         gpu=_tok((32, 256, 2048, 3000, 4096, 8192, 12288, 16384, 24576, 32768, 49152, 65536, 98304,
                                   131072, 196608, 262144), "batch_size")),
        dlrm_interaction(DLRM_MLPERF, _tok((16, 128, 512, 1000, 2048, 4096, 8192, 333), "batch_size"), backward=True,
                         gpu=_tok((32, 256, 1024, 2048, 3000, 4096, 8192, 12288, 16384, 24576, 32768, 49152, 55296,
                                   65536, 98304, 131072), "batch_size")),
        # video, multimodal
        wan_self_attention(WAN21_13B, grid(batch_size=(1, 1, 1, 2, 1, 1, 1, 1), frames=(1, 2, 3, 2, 5, 1, 4, 21),
                                           height=(8, 8, 12, 12, 10, 30, 15, 4), width=(8, 8, 12, 16, 16, 36, 20, 6)),
                           gpu=WAN_480P),
        qwen_vl_merger(QWEN25_VL_7B, _tok((16, 36, 64, 100, 144, 256, 300, 391), "num_merged"),
                       gpu=per_image({256: (2, 8, 24), 576: (1, 6), 1024: (1, 3, 16), 1296: (1,), 2304: (1, 2, 4, 8),
                                      4096: (1, 2, 6)}, "num_merged")),
        gemma3_projector(GEMMA3_4B, _tok((1, 2, 3, 4, 5, 6, 7, 8), "num_images"),
                         gpu=_tok((1, 2, 4, 6, 8, 12, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128), "num_images")),
    ]


WAN_480P = batches({(1, 30, 52): (1, 2, 4, 8, 16, 32), (5, 30, 52): (1, 2), (9, 30, 52): (1,), (13, 30, 52): (1,),
                    (21, 30, 52): (1, 2), (1, 52, 30): (1,), (5, 52, 30): (1,), (9, 52, 30): (1,), (13, 52, 30): (1,)},
                   ("frames", "height", "width"))
"""Wan2.1-T2V-1.3B at its native 480p (832 x 480: 30 x 52 patches of 16 px, either way round), 1 + 4k frames ->
1, 5, 9, 13, 21 latent frames (81 frames = 21). From 9 latent frames on the float64 scores exceed
SCORE_BYTES_LIMIT (a native 81-frame clip: 103 GB): the float64 golden run cannot hold them, and the evaluator
falls back to a float32 golden result (docs/tiers.md; the trace's `golden_run` says so)."""
