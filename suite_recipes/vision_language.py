"""Vision-language and vision towers: patch merge, 2-D / 3-D (M-)RoPE, window and varlen attention.

Every problem takes its dimensions from a record of ``src/solbench/suite/data/model-configs.json`` and
follows the model's own code (transformers ``modeling_<x>.py`` unless said otherwise):

- Qwen2-VL-7B: ``VisionRotaryEmbedding`` + ``Qwen2VisionTransformerPretrainedModel.rot_pos_emb`` and
  ``apply_rotary_pos_emb_vision`` (2-D vision RoPE in 2x2 merge-block order), ``VisionAttention`` over
  ``cu_seqlens`` (one attention per image), ``Qwen2VLVisionBlock`` (LayerNorm, eps 1e-6); the LM's
  ``apply_multimodal_rotary_pos_emb`` (M-RoPE, ``mrope_section``) and its backward;
- Qwen2.5-VL-3B: ``Qwen2_5_VisionTransformerPretrainedModel.get_window_index`` (window index permutation
  over merge units, ``cu_window_seqlens``), ``Qwen2_5_VLVisionBlock`` (RMSNorm), M-RoPE of the LM;
- Qwen3-VL: ``Qwen3VLMoeTextRotaryEmbedding.apply_interleaved_mrope`` with the attention's q/k RMSNorm
  (235B-A22B), ``Qwen3VLVisionModel.fast_pos_embed_interpolate`` (30B-A3B), the DeepStack
  ``Qwen3VLVisionPatchMerger(use_postshuffle_norm=True)`` and ``Qwen3VLTextModel._deepstack_process`` (8B);
- Pixtral-12B: ``PixtralRotaryEmbedding`` (2-D RoPE over a 64x64 position table), ``position_ids_in_meshgrid``,
  ``PixtralAttentionLayer`` with ``generate_block_attention_mask`` (block-diagonal over the images);
- InternVL3.5-8B: ``InternVLChatModel.pixel_shuffle`` (ps_version v2, scale 0.5) and ``mlp1``
  (modeling_internvl_chat.py in the model repo);
- Llama-3.2-11B-Vision: ``MllamaCrossAttentionDecoderLayer`` / ``MllamaTextCrossAttention`` (tanh-gated
  cross-attention with q/k RMSNorm), ``MllamaPrecomputedPositionEmbedding`` (gated tile position
  embedding), ``MllamaVisionEncoderLayer(is_gated=True)`` with ``_prepare_aspect_ratio_attention_mask``;
- LLaVA-1.5-7B: ``LlavaMultiModalProjector`` on ``vision_feature_layer`` -2 with the CLS token dropped;
- Phi-3.5-vision: ``Phi3ImageEmbedding.hd_feature_transform``, ``reshape_hd_patches_2x2merge``,
  ``add_image_newline`` and ``img_projection`` (image_embedding_phi3_v.py in the model repo);
- DINOv2 (dinov2 repo, ``layers/block.py`` and ``layers/swiglu_ffn.py``): LayerScale blocks, ViT-g's
  ``SwiGLUFFNFused``; SAM (segment-anything ``image_encoder.py``): ``Attention`` with ``get_rel_pos`` /
  ``add_decomposed_rel_pos``; SigLIP ``SiglipMultiheadAttentionPoolingHead``; ViT-H/14 and OpenCLIP ViT-H/14
  attention at 224 px (257 tokens).

Native-resolution towers (Qwen-VL, Pixtral) take several images of different sizes per batch: a
workload's images come in pairs, one of ``grid_h x grid_w`` patches and one of ``grid_w/2 x grid_h/2``
(a different size and aspect ratio), described by the ``grid_thw`` input the models themselves take.
Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads at the models' native
resolutions and lengths, ``workload.cpu.jsonl`` 8 small ones (per-tile / per-image token counts are
axes, so the CPU tier can shrink them).
"""

from __future__ import annotations

import dataclasses

from suite_recipes.shapes import grid
from suite_recipes.builder import slug
from suite_recipes.l2 import body, draft, layerscale_attention, sam_window_attention
from suite_recipes.models import model
from suite_recipes.sweeps import tiered
from solbench.suite.draft import ProblemDraft

# --- models (values copied from src/solbench/suite/data/model-configs.json) --------------------------------

QWEN2_VL_7B = model("Qwen2-VL-7B-Instruct", "Qwen/Qwen2-VL-7B-Instruct", "multimodal",
                    {"vision_config.embed_dim": 1280, "vision_config.num_heads": 16,
                     "vision_config.spatial_merge_size": 2, "vision_config.patch_size": 14,
                     "text_config.num_attention_heads": 28, "text_config.num_key_value_heads": 4,
                     "text_config.derived.head_dim": 128, "text_config.rope_theta": 1000000.0,
                     "text_config.rope_scaling.mrope_section": [16, 24, 24]})
QWEN25_VL_3B = model("Qwen2.5-VL-3B-Instruct", "Qwen/Qwen2.5-VL-3B-Instruct", "multimodal",
                     {"vision_config.hidden_size": 1280, "vision_config.num_heads": 16,
                      "vision_config.spatial_merge_size": 2, "vision_config.patch_size": 14,
                      "vision_config.window_size": 112, "text_config.num_attention_heads": 16,
                      "text_config.num_key_value_heads": 2, "text_config.derived.head_dim": 128,
                      "text_config.rope_theta": 1000000.0, "text_config.rope_scaling.mrope_section": [16, 24, 24]})
QWEN3_VL_235B = model("Qwen3-VL-235B-A22B-Instruct", "Qwen/Qwen3-VL-235B-A22B-Instruct", "multimodal",
                      {"text_config.num_attention_heads": 64, "text_config.num_key_value_heads": 4,
                       "text_config.head_dim": 128, "text_config.rope_theta": 5000000,
                       "text_config.rms_norm_eps": 1e-06})
QWEN3_VL_30B = model("Qwen3-VL-30B-A3B-Instruct", "Qwen/Qwen3-VL-30B-A3B-Instruct", "multimodal",
                     {"vision_config.hidden_size": 1152, "vision_config.num_position_embeddings": 2304,
                      "vision_config.spatial_merge_size": 2, "vision_config.patch_size": 16})
QWEN3_VL_8B = model("Qwen3-VL-8B-Instruct", "Qwen/Qwen3-VL-8B-Instruct", "multimodal",
                    {"vision_config.hidden_size": 1152, "vision_config.spatial_merge_size": 2,
                     "vision_config.out_hidden_size": 4096, "vision_config.deepstack_visual_indexes": [8, 16, 24],
                     "text_config.hidden_size": 4096})
PIXTRAL = model("Pixtral-12B-2409", "mistralai/Pixtral-12B-2409", "multimodal",
                {"vision_config.hidden_size": 1024, "vision_config.num_attention_heads": 16,
                 "vision_config.head_dim": 64, "vision_config.rope_theta": 10000.0,
                 "vision_config.image_size": 1024, "vision_config.patch_size": 16})
INTERNVL = model("InternVL3.5-8B", "OpenGVLab/InternVL3_5-8B", "multimodal",
                 {"downsample_ratio": 0.5, "force_image_size": 448, "max_dynamic_patch": 12, "ps_version": "v2",
                  "llm_config.hidden_size": 4096})
MLLAMA = model("Llama-3.2-11B-Vision-Instruct", "meta-llama/Llama-3.2-11B-Vision-Instruct", "multimodal",
               {"text_config.hidden_size": 4096, "text_config.num_attention_heads": 32,
                "text_config.num_key_value_heads": 8, "text_config.derived.head_dim": 128,
                "text_config.rms_norm_eps": 1e-05, "vision_config.hidden_size": 1280,
                "vision_config.num_attention_heads": 16, "vision_config.image_size": 560,
                "vision_config.patch_size": 14, "vision_config.norm_eps": 1e-05,
                "original_params.vision_max_num_chunks": 4})
LLAVA = model("LLaVA-1.5-7B (mlc-llm preset llava)", None, "multimodal",
              {"vision_config.hidden_size": 1024, "vision_config.image_size": 336, "vision_config.patch_size": 14,
               "vision_config.num_attention_heads": 16, "text_config.hidden_size": 4096,
               "projector_hidden_act": "gelu", "vision_feature_layer": -2,
               "vision_feature_select_strategy": "default", "torch_dtype": "float16"})
PHI35_VISION = model("Phi-3.5-vision-instruct", "microsoft/Phi-3.5-vision-instruct", "multimodal",
                     {"hidden_size": 3072, "img_processor.image_dim_out": 1024, "img_processor.num_img_tokens": 144,
                      "embd_layer.hd_transform_order": "sub_glb", "embd_layer.projection_cls": "mlp"})
DINOV2_G = model("DINOv2 ViT-g/14", "facebook/dinov2-giant", "vision",
                 {"hidden_size": 1536, "mlp_ratio": 4, "ffn_layer": "swiglufused", "layer_norm_eps": 1e-06,
                  "layerscale_init": 1.0, "patch_size": 14, "image_size": 518})
DINOV2_S = model("DINOv2 ViT-S/14", "facebook/dinov2-small", "vision",
                 {"hidden_size": 384, "num_attention_heads": 6, "layer_norm_eps": 1e-06, "patch_size": 14})
SAM_H = model("SAM ViT-H image encoder", "facebook/sam-vit-huge", "vision",
              {"encoder_embed_dim": 1280, "encoder_num_heads": 16, "window_size": 14})
SAM_L = model("SAM ViT-L image encoder", "facebook/sam-vit-large", "vision",
              {"encoder_embed_dim": 1024, "encoder_num_heads": 16, "image_size": 1024, "patch_size": 16})
SIGLIP = model("SigLIP so400m/14 @384", "google/siglip-so400m-patch14-384", "vision",
               {"vision_config.hidden_size": 1152, "vision_config.intermediate_size": 4304,
                "vision_config.num_attention_heads": 16, "vision_config.hidden_act": "gelu_pytorch_tanh",
                "vision_config.layer_norm_eps": 1e-06, "vision_config.image_size": 384,
                "vision_config.patch_size": 14})
VIT_H = model("ViT-H/14", "google/vit-huge-patch14-224-in21k", "vision",
              {"hidden_size": 1280, "num_attention_heads": 16, "derived.head_dim": 80, "patch_size": 14})
OPENCLIP_H = model("OpenCLIP ViT-H/14", None, "vision",
                   {"vision_config.image_size": 224, "vision_config.width": 1280, "vision_config.head_width": 80,
                    "vision_config.patch_size": 14})

# --- tiers and sweeps --------------------------------------------------------------------------------------


def two_tiers(d: ProblemDraft, set_name: str, families, cpu: list[dict[str, int]], *, name: str | None = None,
              kernel: str | None = None) -> ProblemDraft:
    """The draft (whose ``workloads`` are the GPU tier) with its set, name, family tags and CPU tier, through
    `sweeps.tiered` (16+ distinct GPU workloads, 8+ CPU ones, kept as given)."""
    if len({tuple(sorted(w.items())) for w in cpu}) < 8:
        raise ValueError(f"{d.name}: needs at least 8 distinct CPU-tier workloads")
    tags = [f"family:{f}" for f in families] + ([f"kernel:{kernel}"] if kernel else [])
    return tiered(dataclasses.replace(d, cpu_workloads=list(cpu)), d.workloads, shift="none", set=set_name,
                  name=name or d.name, extra_tags=tags + list(d.extra_tags))




def _pairs(triples):
    return [{"num_pairs": n, "grid_h": h, "grid_w": w} for n, h, w in triples]


QWEN_IMAGE_PAIRS = ((1, 32, 32), (2, 32, 32), (1, 48, 64), (4, 32, 32), (1, 64, 64), (2, 48, 64), (1, 64, 96),
                    (8, 32, 32), (2, 64, 64), (1, 96, 96), (4, 48, 64), (1, 128, 128), (2, 96, 96), (4, 64, 96),
                    (2, 128, 128), (5, 128, 128))
"""(pairs, grid_h, grid_w) in 14- or 16-px patches: 448 px to 1792 px images (Qwen-VL's max_pixels), 1.3k-82k
patches per batch; each pair adds an image of grid_w/2 x grid_h/2."""
PIXTRAL_IMAGE_PAIRS = ((1, 16, 32), (1, 32, 32), (2, 32, 32), (1, 32, 64), (1, 64, 64), (2, 32, 64), (4, 32, 32),
                       (2, 64, 64), (3, 64, 64), (4, 48, 64), (8, 32, 32), (4, 64, 64), (6, 64, 64), (8, 48, 64),
                       (8, 64, 64), (20, 64, 64))
"""Pixtral's native resolution: up to 1024 px (64 x 64 patches of 16 px) per image."""
CPU_IMAGE_PAIRS = ((1, 4, 8), (1, 8, 8), (2, 4, 8), (1, 8, 12), (2, 8, 8), (1, 12, 16), (1, 16, 16), (3, 8, 8))
PAIR_TOKENS = "num_pairs * (grid_h * grid_w + (grid_w // 2) * (grid_h // 2))"
PAIR_AXES = {"num_pairs": (None, "image pairs: one grid_h x grid_w image and one grid_w/2 x grid_h/2 image"),
             "grid_h": (None, "patch rows of the first image of a pair (multiple of 4)"),
             "grid_w": (None, "patch columns of the first image of a pair (multiple of 4)"),
             "num_images": ("2 * num_pairs", "images in the batch"), "three": (3, "(t, h, w)"),
             "num_tokens": (PAIR_TOKENS, "patches of all images")}
GRID_THW = "torch.tensor([[1, a['grid_h'], a['grid_w']], [1, a['grid_w'] // 2, a['grid_h'] // 2]] * a['num_pairs'], device=device)"

LM_SEQUENCES = ((1, 1024), (1, 2048), (2, 1024), (1, 4096), (4, 1024), (2, 4096), (1, 8192), (8, 1024),
                (4, 4096), (2, 8192), (1, 16384), (8, 4096), (4, 8192), (2, 16384), (1, 32768), (8, 8192))
"""(batch, tokens) of multimodal prefill: 1k-64k tokens per batch."""
CPU_SEQUENCES = ((1, 16), (1, 33), (2, 64), (1, 128), (2, 100), (1, 256), (4, 64), (1, 384))


def _seqs(pairs):
    return [{"batch_size": b, "seq_len": s} for b, s in pairs]


# --- shared reference helpers ----------------------------------------------------------------------------------

_VISION_ROPE = '''

def _vision_rope(grid_thw, head_dim, merge, theta, ref):
    """cos/sin [tokens, head_dim] of Qwen2-VL's rot_pos_emb: (row, column) ids of every patch in 2x2
    merge-block order, VisionRotaryEmbedding(head_dim // 2) (fp32 tables)."""
    acc = _acc(ref)
    ids = []
    for t, h, w in grid_thw.tolist():
        hpos = torch.arange(h, device=ref.device)[:, None].expand(h, w)
        wpos = torch.arange(w, device=ref.device)[None, :].expand(h, w)
        hpos = hpos.reshape(h // merge, merge, w // merge, merge).permute(0, 2, 1, 3).flatten()
        wpos = wpos.reshape(h // merge, merge, w // merge, merge).permute(0, 2, 1, 3).flatten()
        ids.append(torch.stack([hpos, wpos], dim=-1).repeat(t, 1))
    ids = torch.cat(ids)
    dim = head_dim // 2
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    table = torch.arange(int(grid_thw[:, 1:].max()), device=ref.device, dtype=acc)[:, None] * inv_freq[None, :]
    emb = table[ids].flatten(1)
    emb = torch.cat((emb, emb), dim=-1)
    return emb.cos(), emb.sin()


def _apply_rope_vision(x, cos, sin):
    """apply_rotary_pos_emb_vision: x [tokens, heads, head_dim] rotated in fp32, back to x's dtype."""
    xf = x.to(_acc(x))
    return (xf * cos[:, None, :] + _rotate_half(xf) * sin[:, None, :]).to(x.dtype)


def _varlen_attention(q, k, v, cu_seqlens):
    """Bidirectional attention within each [cu_seqlens[i], cu_seqlens[i+1]) segment of q/k/v [tokens, heads, d]
    (flash_attn_varlen_func); segments of one length run as one batch."""
    out = torch.empty_like(q)
    lengths = cu_seqlens[1:] - cu_seqlens[:-1]
    starts = cu_seqlens[:-1]
    for length in torch.unique(lengths).tolist():
        if length == 0:
            continue
        idx = starts[lengths == length][:, None] + torch.arange(length, device=q.device)[None, :]
        qs, ks, vs = (t[idx].transpose(1, 2) for t in (q, k, v))
        o = F.scaled_dot_product_attention(qs, ks, vs)
        out[idx.reshape(-1)] = o.transpose(1, 2).reshape(-1, q.shape[1], q.shape[2])
    return out
'''


def _pair_inputs(extra: dict) -> dict:
    return {**extra, "grid_thw": (["num_images", "three"], "int64", GRID_THW)}


# ================================ Qwen2-VL / Qwen2.5-VL vision towers =========================================

_QWEN_ROPE_2D = '''@torch.no_grad()
def run(query, key, grid_thw):
    cos, sin = _vision_rope(grid_thw, query.shape[-1], @MERGE@, 10000.0, query)
    return _apply_rope_vision(query, cos, sin), _apply_rope_vision(key, cos, sin)
'''


def qwen2_vl_rope_2d(m) -> ProblemDraft:
    d, heads, merge = m.config["vision_config.embed_dim"], m.config["vision_config.num_heads"], \
        m.config["vision_config.spatial_merge_size"]
    hd = d // heads
    axes = {**PAIR_AXES, "num_heads": (heads, "vision_config.num_heads"), "head_dim": (hd, "embed_dim / num_heads")}
    qk = (["num_tokens", "num_heads", "head_dim"], "bfloat16", 1.0)
    d0 = draft(
        m, f"{slug(m)}_vision_rope_2d_h{heads}_d{hd}", "rope_2d",
        f"{m.name} vision tower 2-D rotary embedding (rot_pos_emb + apply_rotary_pos_emb_vision): each patch's "
        f"(row, column) in spatial_merge_size {merge} merge-block order indexes VisionRotaryEmbedding(head_dim/2 = "
        f"{hd // 2}, theta 10000); the row and column frequency halves are concatenated, duplicated to head_dim {hd} "
        f"and applied rotate-half style to q and k in fp32. The images of the batch are given by grid_thw "
        f"(patch_size {m.config['vision_config.patch_size']}, several images of different sizes).",
        axes, _pair_inputs({"query": qk, "key": qk}),
        {"query_out": (["num_tokens", "num_heads", "head_dim"], "bfloat16"),
         "key_out": (["num_tokens", "num_heads", "head_dim"], "bfloat16")},
        body(_VISION_ROPE + "\n\n" + _QWEN_ROPE_2D), _pairs(QWEN_IMAGE_PAIRS), subs={"MERGE": merge})
    return two_tiers(d0, "L1", ["rope_kv"], _pairs(CPU_IMAGE_PAIRS), kernel="rope_2d")


_QWEN2_VL_ATTN = '''@torch.no_grad()
def run(hidden_states, norm_weight, norm_bias, qkv_weight, qkv_bias, proj_weight, proj_bias, grid_thw):
    n, d = hidden_states.shape
    heads = @HEADS@
    cos, sin = _vision_rope(grid_thw, d // heads, @MERGE@, 10000.0, hidden_states)
    sizes = torch.repeat_interleave(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0])
    cu_seqlens = F.pad(sizes.cumsum(0), (1, 0))
    h = F.layer_norm(hidden_states, (d,), norm_weight, norm_bias, 1e-06)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).reshape(n, 3, heads, -1).permute(1, 0, 2, 3).unbind(0)
    q, k = _apply_rope_vision(q, cos, sin), _apply_rope_vision(k, cos, sin)
    o = _varlen_attention(q, k, v, cu_seqlens)
    return hidden_states + F.linear(o.reshape(n, d), proj_weight, proj_bias)
'''


def qwen2_vl_varlen_attention(m) -> ProblemDraft:
    d, heads, merge = m.config["vision_config.embed_dim"], m.config["vision_config.num_heads"], \
        m.config["vision_config.spatial_merge_size"]
    axes = {**PAIR_AXES, "embed_dim": (d, "vision_config.embed_dim"), "three_embed": (3 * d, "3 x embed_dim")}
    d0 = draft(
        m, f"{slug(m)}_vision_varlen_attention_c{d}_h{heads}", "varlen_attention",
        f"{m.name} vision block attention half (Qwen2VLVisionBlock): x + proj(VisionAttention(LayerNorm(x))) over "
        f"the patches of several images of different sizes packed into one sequence: fused qkv with bias, 2-D "
        f"vision RoPE (rot_pos_emb), bidirectional attention within each image only (cu_seqlens from grid_thw, "
        f"as flash_attn_varlen_func), embed_dim {d}, num_heads {heads}, LayerNorm eps 1e-6.",
        axes, _pair_inputs({
            "hidden_states": (["num_tokens", "embed_dim"], "bfloat16", 1.0),
            "norm_weight": (["embed_dim"], "bfloat16", 0.1, 1.0), "norm_bias": (["embed_dim"], "bfloat16", 0.1),
            "qkv_weight": (["three_embed", "embed_dim"], "bfloat16", d ** -0.5),
            "qkv_bias": (["three_embed"], "bfloat16", 0.1),
            "proj_weight": (["embed_dim", "embed_dim"], "bfloat16", d ** -0.5),
            "proj_bias": (["embed_dim"], "bfloat16", 0.1)}),
        {"output": (["num_tokens", "embed_dim"], "bfloat16")},
        body(_VISION_ROPE + "\n\n" + _QWEN2_VL_ATTN), _pairs(QWEN_IMAGE_PAIRS), subs={"HEADS": heads, "MERGE": merge})
    return two_tiers(d0, "L2", ["attention", "rope_kv"], _pairs(CPU_IMAGE_PAIRS), kernel="varlen_attention")


_WINDOW_INDEX = '''

def _window_index(grid_thw, merge, vms):
    """get_window_index: merge units reordered window by window (windows of vms x vms merge units, padded
    with -100 at the right/bottom edges and the padding dropped), and the windows' cu_seqlens in patches."""
    window_index, cu = [], [0]
    offset = 0
    for t, h, w in grid_thw.tolist():
        lh, lw = h // merge, w // merge
        index = torch.arange(t * lh * lw, device=grid_thw.device).reshape(t, lh, lw)
        pad_h, pad_w = vms - lh % vms, vms - lw % vms
        nh, nw = (lh + pad_h) // vms, (lw + pad_w) // vms
        padded = F.pad(index, (0, pad_w, 0, pad_h), "constant", -100)
        padded = padded.reshape(t, nh, vms, nw, vms).permute(0, 1, 3, 2, 4).reshape(t, nh * nw, vms, vms)
        seqlens = (padded != -100).sum([2, 3]).reshape(-1)
        padded = padded.reshape(-1)
        window_index.append(padded[padded != -100] + offset)
        cu.extend((seqlens.cumsum(0) * merge * merge + cu[-1]).tolist())
        offset += t * lh * lw
    # torch.unique_consecutive in the model: padded-only windows repeat a boundary
    cu = [c for i, c in enumerate(cu) if i == 0 or c != cu[i - 1]]
    return torch.cat(window_index), torch.tensor(cu, device=grid_thw.device)
'''

_QWEN25_WINDOW = '''@torch.no_grad()
def run(hidden_states, norm_weight, qkv_weight, qkv_bias, proj_weight, proj_bias, grid_thw):
    n, d = hidden_states.shape
    heads, merge = @HEADS@, @MERGE@
    unit = merge * merge
    window_index, cu_window_seqlens = _window_index(grid_thw, merge, @VMS@)
    cos, sin = _vision_rope(grid_thw, d // heads, merge, 10000.0, hidden_states)
    x = hidden_states.reshape(n // unit, unit, d)[window_index].reshape(n, d)
    cos = cos.reshape(n // unit, unit, -1)[window_index].reshape(n, -1)
    sin = sin.reshape(n // unit, unit, -1)[window_index].reshape(n, -1)
    h = _rmsnorm(x, norm_weight, 1e-06)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).reshape(n, 3, heads, -1).permute(1, 0, 2, 3).unbind(0)
    q, k = _apply_rope_vision(q, cos, sin), _apply_rope_vision(k, cos, sin)
    o = _varlen_attention(q, k, v, cu_window_seqlens)
    x = x + F.linear(o.reshape(n, d), proj_weight, proj_bias)
    reverse = torch.argsort(window_index)
    return x.reshape(n // unit, unit, d)[reverse].reshape(n, d)
'''


def qwen25_vl_window_attention(m) -> ProblemDraft:
    d, heads, merge = m.config["vision_config.hidden_size"], m.config["vision_config.num_heads"], \
        m.config["vision_config.spatial_merge_size"]
    patch, window = m.config["vision_config.patch_size"], m.config["vision_config.window_size"]
    vms = window // merge // patch
    axes = {**PAIR_AXES, "hidden_size": (d, "vision_config.hidden_size"), "three_hidden": (3 * d, "3 x hidden_size")}
    d0 = draft(
        m, f"{slug(m)}_vision_window_attention_c{d}_h{heads}_w{vms * merge}", "window_attention",
        f"{m.name} windowed vision layer (the window-attention blocks, i.e. all but fullatt_block_indexes): "
        f"patches in merge-unit order are permuted by get_window_index (windows of window_size {window} px = "
        f"{vms}x{vms} merge units of {merge}x{merge} patches, padded windows at the image edges), then "
        f"x + proj(attention(RMSNorm(x))) with fused qkv + bias and 2-D vision RoPE (permuted the same way), "
        f"attention only within each window (cu_window_seqlens, varlen), hidden_size {d}, num_heads {heads}; "
        "the result is put back in patch order (argsort of the window index).",
        axes, _pair_inputs({
            "hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
            "norm_weight": (["hidden_size"], "bfloat16", 0.1, 1.0),
            "qkv_weight": (["three_hidden", "hidden_size"], "bfloat16", d ** -0.5),
            "qkv_bias": (["three_hidden"], "bfloat16", 0.1),
            "proj_weight": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5),
            "proj_bias": (["hidden_size"], "bfloat16", 0.1)}),
        {"output": (["num_tokens", "hidden_size"], "bfloat16")},
        body(_VISION_ROPE + _WINDOW_INDEX + "\n\n" + _QWEN25_WINDOW), _pairs(QWEN_IMAGE_PAIRS),
        subs={"HEADS": heads, "MERGE": merge, "VMS": vms})
    return two_tiers(d0, "L2", ["attention", "rope_kv"], _pairs(CPU_IMAGE_PAIRS), kernel="window_attention")


# ================================ M-RoPE of the language models ================================================

_MROPE = '''

def _mrope_positions(batch, seq, device):
    """get_rope_index's 3-D positions for one image per sequence: a text prefix, an image of gh x gw merged tokens
    at (t, h, w) = (p, p + row, p + column), then text continuing from the largest position + 1."""
    prefix = min(16, seq // 4)
    avail = max(seq - 2 * prefix, 0)
    gh = max(math.isqrt(avail), 1)
    gw = avail // gh
    text = torch.arange(prefix)
    t_img = torch.full((gh * gw,), prefix)
    h_img = prefix + torch.arange(gh).repeat_interleave(gw)
    w_img = prefix + torch.arange(gw).repeat(gh)
    start = prefix + max(gh, gw) if gh * gw else prefix
    tail = start + torch.arange(seq - prefix - gh * gw)
    pos = torch.stack([torch.cat([text, t_img, tail]), torch.cat([text, h_img, tail]), torch.cat([text, w_img, tail])])
    return pos[:, None, :].expand(3, batch, seq).contiguous().to(device)


def _mrope_cos_sin(position_ids, dim, theta, section, ref, interleaved=False):
    """cos/sin [batch, seq, dim] from 3-D position ids [3, batch, seq]: M-RoPE takes the t/h/w frequencies by
    mrope_section chunks (Qwen2-VL), interleaved M-RoPE every third frequency (Qwen3-VL). Tables in fp32,
    returned in ref's dtype as the rotary modules do."""
    acc = _acc(ref)
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    freqs = position_ids.to(acc)[..., None] * inv_freq
    if interleaved:
        f = freqs[0].clone()
        for axis, offset in ((1, 1), (2, 2)):
            idx = slice(offset, section[axis] * 3, 3)
            f[..., idx] = freqs[axis, ..., idx]
        emb = torch.cat((f, f), dim=-1)
        return emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)
    chunks = list(section) * 2
    cos = torch.cat([c[i % 3] for i, c in enumerate(cos.split(chunks, dim=-1))], dim=-1)
    sin = torch.cat([s[i % 3] for i, s in enumerate(sin.split(chunks, dim=-1))], dim=-1)
    return cos, sin
'''

_MROPE_FWD = '''@torch.no_grad()
def run(query, key, position_ids):
    cos, sin = _mrope_cos_sin(position_ids, query.shape[-1], @THETA@, @SECTION@, query)
    cos, sin = cos[:, None], sin[:, None]
    return query * cos + _rotate_half(query) * sin, key * cos + _rotate_half(key) * sin
'''

_MROPE_BWD = '''def run(grad_query_out, grad_key_out, position_ids):
    # The rotation is linear in q and k: their gradients depend on the output gradients and positions only.
    cos, sin = _mrope_cos_sin(position_ids, grad_query_out.shape[-1], @THETA@, @SECTION@, grad_query_out)
    cos, sin = cos[:, None], sin[:, None]
    with torch.enable_grad():
        q = torch.zeros_like(grad_query_out).requires_grad_()
        k = torch.zeros_like(grad_key_out).requires_grad_()
        outs = (q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin)
        return torch.autograd.grad(outs, (q, k), (grad_query_out, grad_key_out))
'''


def _lm_rope_axes(m):
    heads, kv = m.config["text_config.num_attention_heads"], m.config["text_config.num_key_value_heads"]
    hd = m.config["text_config.derived.head_dim"]
    axes = {"batch_size": (None, "sequences"), "seq_len": (None, "prompt tokens (text + image)"),
            "num_heads": (heads, "text_config.num_attention_heads"),
            "num_kv_heads": (kv, "text_config.num_key_value_heads"), "head_dim": (hd, "text_config.derived.head_dim"),
            "three": (3, "(temporal, height, width) position components")}
    return axes, heads, kv, hd


def mrope(m, *, backward: bool = False) -> ProblemDraft:
    axes, heads, kv, hd = _lm_rope_axes(m)
    theta, section = m.config["text_config.rope_theta"], m.config["text_config.rope_scaling.mrope_section"]
    q = (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16")
    k = (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16")
    positions = (["three", "batch_size", "seq_len"], "int64", "_mrope_positions(a['batch_size'], a['seq_len'], device)")
    inputs = {"query": (*q, 1.0), "key": (*k, 1.0), "position_ids": positions}
    what = (f"{m.name} language-model multimodal rotary embedding (apply_multimodal_rotary_pos_emb): 3-D position "
            f"ids (temporal, height, width; get_rope_index's layout of a text prefix, one image and text) give "
            f"three cos/sin tables (rope_theta {theta}); mrope_section {section} (x2 over the duplicated halves) "
            f"picks which component each frequency chunk takes; applied rotate-half style to q ({heads} heads) and "
            f"k ({kv} KV heads), head_dim {hd}, in the tables' bf16 as the model does.")
    if backward:
        inputs = {"grad_query_out": (*q, 1.0), "grad_key_out": (*k, 1.0), "position_ids": positions}
        d0 = draft(m, f"{slug(m)}_mrope_backward_hq{heads}_hkv{kv}_d{hd}", "mrope_backward",
                   "Backward of the " + what + " Given the gradients of the rotated q and k, returns those of q and k "
                   "(the transposed rotation; being linear, it needs no forward activations).", axes, inputs,
                   {"grad_query": q, "grad_key": k}, body(_MROPE + "\n\n" + _MROPE_BWD), _seqs(LM_SEQUENCES),
                   backward=True, subs={"THETA": float(theta), "SECTION": list(section)})
    else:
        d0 = draft(m, f"{slug(m)}_mrope_hq{heads}_hkv{kv}_d{hd}", "mrope", what, axes, inputs,
                   {"query_out": q, "key_out": k}, body(_MROPE + "\n\n" + _MROPE_FWD), _seqs(LM_SEQUENCES),
                   subs={"THETA": float(theta), "SECTION": list(section)})
    return two_tiers(d0, "L1", ["rope_kv"], _seqs(CPU_SEQUENCES), kernel="mrope")


_QKNORM_IMROPE = '''@torch.no_grad()
def run(query, key, q_norm_weight, k_norm_weight, position_ids):
    q = _rmsnorm(query, q_norm_weight, @EPS@)
    k = _rmsnorm(key, k_norm_weight, @EPS@)
    cos, sin = _mrope_cos_sin(position_ids, query.shape[-1], @THETA@, @SECTION@, query, interleaved=True)
    cos, sin = cos[:, :, None], sin[:, :, None]
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
'''
QWEN3_MROPE_SECTION = [24, 20, 20]
"""Qwen3VL(Moe)TextRotaryEmbedding's mrope_section default (the record has no rope_scaling)."""


def qwen3_vl_qknorm_interleaved_mrope(m) -> ProblemDraft:
    heads, kv, hd = (m.config["text_config.num_attention_heads"], m.config["text_config.num_key_value_heads"],
                     m.config["text_config.head_dim"])
    theta, eps = m.config["text_config.rope_theta"], m.config["text_config.rms_norm_eps"]
    q = (["batch_size", "seq_len", "num_heads", "head_dim"], "bfloat16")
    k = (["batch_size", "seq_len", "num_kv_heads", "head_dim"], "bfloat16")
    d0 = draft(
        m, f"{slug(m)}_qknorm_interleaved_mrope_hq{heads}_hkv{kv}_d{hd}", "qknorm_mrope",
        f"{m.name} attention prologue after the q/k projections: per-head RMSNorm of q and k (q_norm / k_norm, "
        f"rms_norm_eps {eps}), then interleaved M-RoPE (apply_interleaved_mrope: frequency j takes the height "
        f"position where j % 3 == 1 and the width position where j % 3 == 2, within mrope_section "
        f"{QWEN3_MROPE_SECTION}, the code's default; the temporal one elsewhere), rope_theta {theta}, "
        f"{heads} query heads and {kv} KV heads of head_dim {hd}; layout [batch, seq, heads, head_dim] in and out.",
        {"batch_size": (None, "sequences"), "seq_len": (None, "prompt tokens (text + image)"),
         "num_heads": (heads, "text_config.num_attention_heads"),
         "num_kv_heads": (kv, "text_config.num_key_value_heads"), "head_dim": (hd, "text_config.head_dim"),
         "three": (3, "(temporal, height, width)")},
        {"query": (*q, 1.0), "key": (*k, 1.0), "q_norm_weight": (["head_dim"], "bfloat16", 0.1, 1.0),
         "k_norm_weight": (["head_dim"], "bfloat16", 0.1, 1.0),
         "position_ids": (["three", "batch_size", "seq_len"], "int64",
                          "_mrope_positions(a['batch_size'], a['seq_len'], device)")},
        {"query_out": q, "key_out": k}, body(_MROPE + "\n\n" + _QKNORM_IMROPE), _seqs(LM_SEQUENCES),
        subs={"THETA": float(theta), "SECTION": QWEN3_MROPE_SECTION, "EPS": eps})
    return two_tiers(d0, "L1", ["rope_kv"], _seqs(CPU_SEQUENCES), kernel="interleaved_mrope")


# ================================ Qwen3-VL: position interpolation and DeepStack ===============================

_POS_INTERP = '''@torch.no_grad()
def run(hidden_states, pos_embed_weight, grid_thw):
    side, merge = @SIDE@, @MERGE@
    idx_list, weight_list, sizes = [[], [], [], []], [[], [], [], []], []
    for t, h, w in grid_thw.tolist():
        h_idxs = torch.linspace(0, side - 1, h, device=grid_thw.device)
        w_idxs = torch.linspace(0, side - 1, w, device=grid_thw.device)
        hf, wf = h_idxs.int(), w_idxs.int()
        hc, wc = (hf + 1).clip(max=side - 1), (wf + 1).clip(max=side - 1)
        dh, dw = h_idxs - hf, w_idxs - wf
        bh, bhc = hf * side, hc * side
        indices = [(bh[:, None] + wf[None]).flatten(), (bh[:, None] + wc[None]).flatten(),
                   (bhc[:, None] + wf[None]).flatten(), (bhc[:, None] + wc[None]).flatten()]
        weights = [((1 - dh)[:, None] * (1 - dw)[None]).flatten(), ((1 - dh)[:, None] * dw[None]).flatten(),
                   (dh[:, None] * (1 - dw)[None]).flatten(), (dh[:, None] * dw[None]).flatten()]
        for i in range(4):
            idx_list[i].append(indices[i])
            weight_list[i].append(weights[i])
        sizes.append((t, h, w))
    idx = torch.stack([torch.cat(i) for i in idx_list]).long()
    weight = torch.stack([torch.cat(w) for w in weight_list]).to(pos_embed_weight.dtype)
    pos = pos_embed_weight[idx] * weight[:, :, None]
    pos = pos[0] + pos[1] + pos[2] + pos[3]
    out, start = [], 0
    for t, h, w in sizes:
        p = pos[start:start + h * w].repeat(t, 1)
        start += h * w
        out.append(p.view(t, h // merge, merge, w // merge, merge, -1).permute(0, 1, 3, 2, 4, 5).flatten(0, 4))
    return hidden_states + torch.cat(out)
'''


def qwen3_vl_pos_interpolate(m) -> ProblemDraft:
    d, table, merge = (m.config["vision_config.hidden_size"], m.config["vision_config.num_position_embeddings"],
                       m.config["vision_config.spatial_merge_size"])
    side = int(round(table ** 0.5))
    axes = {**PAIR_AXES, "hidden_size": (d, "vision_config.hidden_size"),
            "num_positions": (table, "vision_config.num_position_embeddings")}
    d0 = draft(
        m, f"{slug(m)}_vision_pos_embed_interpolate_c{d}_p{table}", "pos_embed_interpolate",
        f"{m.name} vision patch embeddings plus the learned position embedding resampled to each image's grid "
        f"(fast_pos_embed_interpolate): the {side}x{side} table (num_position_embeddings {table}, hidden_size {d}) "
        f"is bilinearly interpolated at linspace(0, {side - 1}, h) x linspace(0, {side - 1}, w) via four gathers and "
        f"bf16 weights, reordered into {merge}x{merge} merge blocks and added to the patches of several images of "
        f"different sizes (patch_size {m.config['vision_config.patch_size']}).",
        axes, _pair_inputs({"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
                            "pos_embed_weight": (["num_positions", "hidden_size"], "bfloat16", 0.5)}),
        {"output": (["num_tokens", "hidden_size"], "bfloat16")},
        body(_POS_INTERP), _pairs(QWEN_IMAGE_PAIRS), subs={"SIDE": side, "MERGE": merge})
    return two_tiers(d0, "L1", [], _pairs(CPU_IMAGE_PAIRS), kernel="pos_embed_interpolate")


_DEEPSTACK_MERGER = '''@torch.no_grad()
def run(hidden_states, norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    c = fc1_weight.shape[1]
    x = F.layer_norm(hidden_states.view(-1, c), (c,), norm_weight, norm_bias, 1e-06)
    return F.linear(F.gelu(F.linear(x, fc1_weight, fc1_bias)), fc2_weight, fc2_bias)
'''


def qwen3_vl_deepstack_merger(m) -> ProblemDraft:
    d, merge, out = (m.config["vision_config.hidden_size"], m.config["vision_config.spatial_merge_size"],
                     m.config["vision_config.out_hidden_size"])
    c = d * merge * merge
    d0 = draft(
        m, f"{slug(m)}_deepstack_merger_c{d}_o{out}", "patch_merger",
        f"{m.name} DeepStack patch merger (Qwen3VLVisionPatchMerger with use_postshuffle_norm=True, one per "
        f"deepstack_visual_indexes {m.config['vision_config.deepstack_visual_indexes']} level and the final one "
        f"without): each {merge}x{merge} block of vision tokens (hidden_size {d}) is concatenated to {c} channels, "
        f"LayerNorm({c}, eps 1e-6) after the shuffle, Linear {c}->{c}, GELU, Linear {c}->out_hidden_size {out}.",
        {"num_merged": (None, "merged tokens (images x (h/2) x (w/2))"),
         "num_tokens": ("4 * num_merged", "vision tokens"), "hidden_size": (d, "vision_config.hidden_size"),
         "merged_dim": (c, "hidden_size x spatial_merge_size^2"), "out_hidden": (out, "vision_config.out_hidden_size")},
        {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "norm_weight": (["merged_dim"], "bfloat16", 0.1, 1.0), "norm_bias": (["merged_dim"], "bfloat16", 0.1),
         "fc1_weight": (["merged_dim", "merged_dim"], "bfloat16", c ** -0.5),
         "fc1_bias": (["merged_dim"], "bfloat16", 0.1),
         "fc2_weight": (["out_hidden", "merged_dim"], "bfloat16", c ** -0.5),
         "fc2_bias": (["out_hidden"], "bfloat16", 0.1)},
        {"output": (["num_merged", "out_hidden"], "bfloat16")}, _DEEPSTACK_MERGER,
        [{"num_merged": n} for n in (256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 20480,
                                      24576, 32768, 49152, 65536)])
    return two_tiers(d0, "L2", [], [{"num_merged": n} for n in (1, 2, 4, 7, 16, 25, 36, 64)], kernel="patch_merger")


_DEEPSTACK_INJECT = '''@torch.no_grad()
def run(hidden_states, visual_pos_masks, visual_embeds):
    # hidden_states[visual_pos_masks, :] += visual_embeds, with the k-th masked position taking row k
    b, s, d = hidden_states.shape
    mask = visual_pos_masks.reshape(b * s)
    rows = (torch.cumsum(mask.long(), 0) - 1).clamp(min=0)
    added = torch.where(mask[:, None], visual_embeds.to(hidden_states.dtype)[rows], 0)
    return hidden_states + added.view(b, s, d)
'''


def qwen3_vl_deepstack_inject(m) -> ProblemDraft:
    d = m.config["text_config.hidden_size"]
    mask = ("torch.zeros(shape, dtype=torch.bool, device=device).index_fill_(1, "
            "torch.arange(16, 16 + a['image_tokens'], device=device), True)")
    gpu = grid(batch_size=(1, 1, 2, 1, 4, 2, 1, 8, 4, 2, 1, 8, 4, 2, 8, 4),
               image_tokens=(256, 1024, 1024, 4096, 1024, 4096, 8192, 1024, 4096, 8192, 16384, 4096, 8192, 16384,
                             8192, 16384))
    d0 = draft(
        m, f"{slug(m)}_deepstack_inject_h{d}", "deepstack_inject",
        f"{m.name} DeepStack feature injection (_deepstack_process, after each of the first "
        f"{len(m.config['vision_config.deepstack_visual_indexes'])} decoder layers): the hidden states at the visual "
        f"token positions (visual_pos_masks) get that level's merged vision features added, hidden_size {d}; the "
        "text positions pass through. Each sequence holds 16 text tokens, image_tokens image tokens, 48 text tokens.",
        {"batch_size": (None, "sequences"), "image_tokens": (None, "image tokens per sequence"),
         "seq_len": ("image_tokens + 64", "tokens per sequence"), "hidden_size": (d, "text_config.hidden_size"),
         "num_visual": ("batch_size * image_tokens", "visual tokens in the batch")},
        {"hidden_states": (["batch_size", "seq_len", "hidden_size"], "bfloat16", 1.0),
         "visual_pos_masks": (["batch_size", "seq_len"], "bool", mask),
         "visual_embeds": (["num_visual", "hidden_size"], "bfloat16", 1.0)},
        {"output": (["batch_size", "seq_len", "hidden_size"], "bfloat16")}, _DEEPSTACK_INJECT, gpu)
    cpu = grid(batch_size=(1, 1, 2, 1, 3, 2, 1, 4), image_tokens=(4, 16, 16, 64, 25, 100, 200, 36))
    return two_tiers(d0, "L1", [], cpu, kernel="deepstack_inject")


# ================================ Pixtral ======================================================================

_PIXTRAL_ROPE = '''

def _pixtral_cos_sin(grid_thw, dim, theta, side, ref):
    """PixtralRotaryEmbedding: a [side*side, dim] table whose first half of frequencies (even ones) follow the
    patch row and second half (odd ones) the column, indexed by position_ids_in_meshgrid (row * side + col)."""
    acc = _acc(ref)
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    pos = torch.arange(side, device=ref.device, dtype=acc)
    fh, fw = torch.outer(pos, freqs[::2]), torch.outer(pos, freqs[1::2])
    inv = torch.cat([fh[:, None, :].repeat(1, side, 1), fw[None, :, :].repeat(side, 1, 1)], dim=-1).reshape(-1, dim // 2)
    inv = torch.cat((inv, inv), dim=-1)
    ids = [(torch.arange(h, device=ref.device)[:, None] * side + torch.arange(w, device=ref.device)[None, :]).flatten()
           for _, h, w in grid_thw.tolist()]
    emb = inv[torch.cat(ids)]
    return emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)
'''

_PIXTRAL_ROPE_RUN = '''@torch.no_grad()
def run(query, key, grid_thw):
    cos, sin = _pixtral_cos_sin(grid_thw, query.shape[-1], @THETA@, @SIDE@, query)
    cos, sin = cos[:, None], sin[:, None]
    return query * cos + _rotate_half(query) * sin, key * cos + _rotate_half(key) * sin
'''


def pixtral_rope_2d(m) -> ProblemDraft:
    heads, hd, theta = (m.config["vision_config.num_attention_heads"], m.config["vision_config.head_dim"],
                        m.config["vision_config.rope_theta"])
    side = m.config["vision_config.image_size"] // m.config["vision_config.patch_size"]
    qk = (["num_tokens", "num_heads", "head_dim"], "bfloat16", 1.0)
    d0 = draft(
        m, f"{slug(m)}_vision_rope_2d_h{heads}_d{hd}", "rope_2d",
        f"{m.name} vision encoder 2-D RoPE at native resolution: PixtralRotaryEmbedding's table over "
        f"image_size/patch_size = {side} positions per side (rope_theta {theta}, head_dim {hd}: even frequencies "
        "follow the patch row, odd ones the column), indexed by position_ids_in_meshgrid (row * "
        f"{side} + column) for the patches of several images of different sizes, applied rotate-half style "
        "(apply_rotary_pos_emb) to q and k with the table in bf16.",
        {**PAIR_AXES, "num_heads": (heads, "vision_config.num_attention_heads"), "head_dim": (hd, "vision_config.head_dim")},
        _pair_inputs({"query": qk, "key": qk}),
        {"query_out": (["num_tokens", "num_heads", "head_dim"], "bfloat16"),
         "key_out": (["num_tokens", "num_heads", "head_dim"], "bfloat16")},
        body(_PIXTRAL_ROPE + "\n\n" + _PIXTRAL_ROPE_RUN), _pairs(PIXTRAL_IMAGE_PAIRS),
        subs={"THETA": float(theta), "SIDE": side})
    return two_tiers(d0, "L1", ["rope_kv"], _pairs(CPU_IMAGE_PAIRS), kernel="rope_2d")


_PIXTRAL_LAYER = '''@torch.no_grad()
def run(hidden_states, norm_weight, q_proj, k_proj, v_proj, o_proj, grid_thw):
    n, d = hidden_states.shape
    heads = @HEADS@
    h = _rmsnorm(hidden_states, norm_weight, 1e-05)
    q, k, v = (F.linear(h, w).view(n, heads, -1) for w in (q_proj, k_proj, v_proj))
    cos, sin = _pixtral_cos_sin(grid_thw, q.shape[-1], @THETA@, @SIDE@, hidden_states)
    cos, sin = cos[:, None], sin[:, None]
    q, k = q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
    # generate_block_attention_mask: one block per image on the diagonal, -inf elsewhere
    cu_seqlens = F.pad((grid_thw[:, 0] * grid_thw[:, 1] * grid_thw[:, 2]).cumsum(0), (1, 0))
    o = _varlen_attention(q, k, v, cu_seqlens)
    return hidden_states + F.linear(o.reshape(n, d), o_proj)
'''


def pixtral_attention_layer(m) -> ProblemDraft:
    d, heads, hd, theta = (m.config["vision_config.hidden_size"], m.config["vision_config.num_attention_heads"],
                           m.config["vision_config.head_dim"], m.config["vision_config.rope_theta"])
    side = m.config["vision_config.image_size"] // m.config["vision_config.patch_size"]
    d0 = draft(
        m, f"{slug(m)}_vision_block_diag_attention_c{d}_h{heads}", "block_diagonal_attention",
        f"{m.name} vision encoder attention half-layer (PixtralAttentionLayer): x + o_proj(attention(RMSNorm(x), "
        f"eps 1e-5)) over the patches of several images of different sizes at native resolution, concatenated into "
        f"one sequence; q/k/v/o without bias, 2-D RoPE (PixtralRotaryEmbedding, rope_theta {theta}, {side} positions "
        f"per side), and the block-diagonal mask of generate_block_attention_mask (each image attends to itself "
        f"only); hidden_size {d}, {heads} heads of head_dim {hd}.",
        {**PAIR_AXES, "hidden_size": (d, "vision_config.hidden_size")},
        _pair_inputs({"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
                      "norm_weight": (["hidden_size"], "bfloat16", 0.1, 1.0),
                      "q_proj": (["hidden_size", "hidden_size"], "bfloat16", 2 * d ** -0.5),
                      "k_proj": (["hidden_size", "hidden_size"], "bfloat16", 2 * d ** -0.5),
                      "v_proj": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5),
                      "o_proj": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5)}),
        {"output": (["num_tokens", "hidden_size"], "bfloat16")},
        body(_VISION_ROPE + _PIXTRAL_ROPE + "\n\n" + _PIXTRAL_LAYER), _pairs(PIXTRAL_IMAGE_PAIRS),
        subs={"HEADS": heads, "THETA": float(theta), "SIDE": side})
    return two_tiers(d0, "L2", ["attention", "rope_kv"], _pairs(CPU_IMAGE_PAIRS), kernel="block_diagonal_attention")


# ================================ projectors: InternVL, LLaVA, Phi-3.5-vision ==================================

_INTERNVL = '''@torch.no_grad()
def run(vit_embeds, norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    x = vit_embeds[:, 1:, :]
    n, tokens, c = x.shape
    side = int(math.isqrt(tokens))
    x = x.reshape(n, side, side, c)
    # pixel_shuffle(scale_factor=0.5), ps_version v2
    n, w, h, c = x.shape
    x = x.view(n, w, h // 2, c * 2).permute(0, 2, 1, 3).contiguous()
    x = x.view(n, h // 2, w // 2, c * 4).permute(0, 2, 1, 3).contiguous()
    x = x.reshape(n, -1, c * 4)
    x = F.layer_norm(x, (c * 4,), norm_weight, norm_bias, 1e-05)
    return F.linear(F.gelu(F.linear(x, fc1_weight, fc1_bias)), fc2_weight, fc2_bias)
'''
INTERNVIT_WIDTH = 1024
"""InternViT-300M-448px-V2.5's hidden_size, the encoder InternVL3.5-8B uses (the record leaves vision_config out)."""


def internvl_projector(m) -> ProblemDraft:
    llm, size = m.config["llm_config.hidden_size"], m.config["force_image_size"]
    c = INTERNVIT_WIDTH
    side = size // 14
    gpu = grid(num_tiles=(1, 2, 3, 5, 7, 9, 13, 16, 26, 32, 39, 52, 64, 78, 104, 130), patch_side=(side,) * 16)
    cpu = grid(num_tiles=(1, 1, 2, 1, 3, 2, 1, 4), patch_side=(2, 4, 2, 6, 4, 6, 8, 2))
    d0 = draft(
        m, f"{slug(m)}_pixel_shuffle_projector_c{c}_h{llm}", "pixel_shuffle_projector",
        f"{m.name} vision-to-language projector (extract_feature + mlp1): the InternViT output of each "
        f"{size}px tile (force_image_size; {side}x{side} patches of 14 px plus CLS, width {c}) drops the CLS token, "
        f"pixel_shuffle with downsample_ratio 0.5 (ps_version v2: two view/permute steps) folds 2x2 patches into "
        f"{4 * c} channels ({side // 2}x{side // 2} = {(side // 2) ** 2} tokens per tile), then LayerNorm({4 * c}), "
        f"Linear {4 * c}->{llm}, GELU, Linear {llm}->{llm} (llm_config.hidden_size). Dynamic tiling gives up to "
        f"max_dynamic_patch {m.config['max_dynamic_patch']} tiles plus a thumbnail per image.",
        {"num_tiles": (None, "448-px tiles in the batch"), "patch_side": (None, f"patches per tile side ({side})"),
         "num_patches": ("patch_side * patch_side + 1", "patches + CLS"),
         "out_tokens": ("(patch_side // 2) * (patch_side // 2)", "tokens per tile after pixel shuffle"),
         "vit_hidden": (c, "InternViT-300M width"), "shuffled": (4 * c, "vit_hidden / downsample_ratio^2"),
         "llm_hidden": (llm, "llm_config.hidden_size")},
        {"vit_embeds": (["num_tiles", "num_patches", "vit_hidden"], "bfloat16", 1.0),
         "norm_weight": (["shuffled"], "bfloat16", 0.1, 1.0), "norm_bias": (["shuffled"], "bfloat16", 0.1),
         "fc1_weight": (["llm_hidden", "shuffled"], "bfloat16", (4 * c) ** -0.5),
         "fc1_bias": (["llm_hidden"], "bfloat16", 0.1),
         "fc2_weight": (["llm_hidden", "llm_hidden"], "bfloat16", llm ** -0.5),
         "fc2_bias": (["llm_hidden"], "bfloat16", 0.1)},
        {"output": (["num_tiles", "out_tokens", "llm_hidden"], "bfloat16")}, _INTERNVL, gpu)
    return two_tiers(d0, "L2", [], cpu, kernel="pixel_shuffle_projector")


_LLAVA = '''@torch.no_grad()
def run(image_features, linear_1_weight, linear_1_bias, linear_2_weight, linear_2_bias):
    x = image_features[:, 1:]
    return F.linear(F.gelu(F.linear(x, linear_1_weight, linear_1_bias)), linear_2_weight, linear_2_bias)
'''


def llava_projector(m) -> ProblemDraft:
    v, t = m.config["vision_config.hidden_size"], m.config["text_config.hidden_size"]
    side = m.config["vision_config.image_size"] // m.config["vision_config.patch_size"]
    f16 = "float16"
    gpu = grid(num_images=(1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192), patch_side=(side,) * 16)
    cpu = grid(num_images=(1, 2, 1, 3, 1, 2, 4, 1), patch_side=(2, 2, 4, 4, 6, 6, 2, 8))
    d0 = draft(
        m, f"{slug(m)}_mm_projector_v{v}_t{t}", "mm_projector",
        f"{m.name} multimodal projector (LlavaMultiModalProjector, projector_hidden_act gelu): the CLIP ViT-L/14-336 "
        f"features of vision_feature_layer -2 ({side}x{side} patches + CLS, hidden_size {v}) drop the CLS token "
        f"(vision_feature_select_strategy default), then Linear {v}->{t}, GELU, Linear {t}->{t} (text hidden_size); "
        "fp16 as the checkpoint (torch_dtype float16).",
        {"num_images": (None, "images"), "patch_side": (None, f"patches per side ({side} at 336 px)"),
         "num_patches": ("patch_side * patch_side + 1", "patches + CLS"),
         "image_tokens": ("patch_side * patch_side", "tokens per image"),
         "vision_hidden": (v, "vision_config.hidden_size"), "text_hidden": (t, "text_config.hidden_size")},
        {"image_features": (["num_images", "num_patches", "vision_hidden"], f16, 1.0),
         "linear_1_weight": (["text_hidden", "vision_hidden"], f16, v ** -0.5),
         "linear_1_bias": (["text_hidden"], f16, 0.1),
         "linear_2_weight": (["text_hidden", "text_hidden"], f16, t ** -0.5),
         "linear_2_bias": (["text_hidden"], f16, 0.1)},
        {"output": (["num_images", "image_tokens", "text_hidden"], f16)}, _LLAVA, gpu)
    return two_tiers(d0, "L2", [], cpu, kernel="mm_projector")


_PHI3V = '''def _hd_2x2merge(x, h_crop, w_crop):
    n, tokens, c = x.shape
    side = int(math.isqrt(tokens))
    images = n // (h_crop * w_crop)
    x = x.reshape(n, side // 2, 2, side // 2, 2, c).permute(0, 1, 3, 2, 4, 5).reshape(n, -1, 4 * c)
    x = x.reshape(images, h_crop, w_crop, side // 2, side // 2, -1).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(images, h_crop * side // 2, w_crop * side // 2, 4 * c)


def _newline(x, sub_gn):
    images, h, w, c = x.shape
    return torch.cat([x, sub_gn.view(1, 1, 1, c).expand(images, h, 1, c)], dim=2).reshape(images, -1, c)


@torch.no_grad()
def run(image_features, sub_gn, glb_gn, proj1_weight, proj1_bias, proj2_weight, proj2_bias, crop_grid):
    h_crop, w_crop = crop_grid.tolist()
    glb = _newline(_hd_2x2merge(image_features[:, 0], 1, 1), sub_gn)
    parts = []
    for i in range(image_features.shape[0]):
        sub = _newline(_hd_2x2merge(image_features[i, 1:1 + h_crop * w_crop], h_crop, w_crop), sub_gn)
        parts += [sub[0], glb_gn.view(1, -1), glb[i]]
    x = torch.cat(parts, dim=0)
    return F.linear(F.gelu(F.linear(x, proj1_weight, proj1_bias)), proj2_weight, proj2_bias)
'''


def phi35_vision_hd_projection(m) -> ProblemDraft:
    hidden, c = m.config["hidden_size"], m.config["img_processor.image_dim_out"]
    side = 24  # 336 px / 14: num_img_tokens 144 = (24 / 2)^2 after the 2x2 merge
    per_image = ("h_crop * (patch_side // 2) * (w_crop * (patch_side // 2) + 1) + 1 "
                 "+ (patch_side // 2) * (patch_side // 2 + 1)")
    gpu = [{"num_images": n, "h_crop": h, "w_crop": w, "patch_side": side} for n, h, w in
           ((1, 1, 1), (1, 1, 2), (1, 2, 2), (2, 2, 2), (1, 3, 4), (4, 2, 2), (1, 4, 4), (2, 3, 4), (8, 2, 2),
            (4, 3, 4), (2, 4, 4), (16, 2, 2), (8, 3, 4), (4, 4, 4), (16, 3, 4), (16, 4, 4))]
    cpu = [{"num_images": n, "h_crop": h, "w_crop": w, "patch_side": s} for n, h, w, s in
           ((1, 1, 1, 2), (1, 1, 2, 2), (1, 2, 2, 2), (2, 1, 1, 4), (1, 2, 1, 4), (1, 2, 2, 4), (2, 1, 2, 2),
            (1, 1, 1, 6))]
    d0 = draft(
        m, f"{slug(m)}_hd_transform_projection_c{c}_h{hidden}", "hd_transform_projection",
        f"{m.name} image embedding (Phi3ImageEmbedding.hd_feature_transform, hd_transform_order sub_glb, "
        f"projection_cls mlp): CLIP ViT-L/14-336 features (image_dim_out {c}) of one global view and h_crop x "
        f"w_crop 336-px crops per image; each crop's 24x24 patches are 2x2-merged to 12x12 tokens of {4 * c} "
        f"(num_img_tokens {m.config['img_processor.num_img_tokens']}), the crops tiled into one "
        f"(12 h_crop) x (12 w_crop) grid with a learned sub_GN newline token after every row, then the glb_GN "
        f"separator and the global view (same merge + newlines); img_projection Linear {4 * c}->{hidden}, GELU, "
        f"Linear {hidden}->{hidden}. The crop grid is the same for every image of a workload.",
        {"num_images": (None, "images"), "h_crop": (None, "crop rows"), "w_crop": (None, "crop columns"),
         "patch_side": (None, "patches per crop side (24)"), "crops": ("1 + h_crop * w_crop", "global + crops"),
         "patches": ("patch_side * patch_side", "patches per crop"), "image_dim": (c, "img_processor.image_dim_out"),
         "merged_dim": (4 * c, "4 x image_dim_out"), "hidden_size": (hidden, "hidden_size"),
         "two": (2, "(h_crop, w_crop)"), "out_tokens": (f"num_images * ({per_image})", "image tokens")},
        {"image_features": (["num_images", "crops", "patches", "image_dim"], "bfloat16", 1.0),
         "sub_gn": (["merged_dim"], "bfloat16", 1.0), "glb_gn": (["merged_dim"], "bfloat16", 1.0),
         "proj1_weight": (["hidden_size", "merged_dim"], "bfloat16", (4 * c) ** -0.5),
         "proj1_bias": (["hidden_size"], "bfloat16", 0.1),
         "proj2_weight": (["hidden_size", "hidden_size"], "bfloat16", hidden ** -0.5),
         "proj2_bias": (["hidden_size"], "bfloat16", 0.1),
         "crop_grid": (["two"], "int64", "torch.tensor([a['h_crop'], a['w_crop']], device=device)")},
        {"output": (["out_tokens", "hidden_size"], "bfloat16")}, _PHI3V, gpu)
    return two_tiers(d0, "L2", [], cpu, kernel="hd_transform_projection")


# ================================ Llama-3.2-Vision ==============================================================

_MLLAMA_XATTN = '''@torch.no_grad()
def run(hidden_states, cross_attention_states, input_layernorm_weight, q_proj, k_proj, v_proj, o_proj,
        q_norm_weight, k_norm_weight, cross_attn_attn_gate):
    b, t, d = hidden_states.shape
    heads, kv_heads, hd = @HEADS@, @KV@, @HD@
    x = _rmsnorm(hidden_states, input_layernorm_weight, @EPS@)
    q = _rmsnorm(F.linear(x, q_proj).view(b, t, heads, hd).transpose(1, 2), q_norm_weight, @EPS@)
    k = F.linear(cross_attention_states, k_proj).view(b, -1, kv_heads, hd).transpose(1, 2)
    k = _rmsnorm(k, k_norm_weight, @EPS@)
    v = F.linear(cross_attention_states, v_proj).view(b, -1, kv_heads, hd).transpose(1, 2)
    k = k.repeat_interleave(heads // kv_heads, dim=1)
    v = v.repeat_interleave(heads // kv_heads, dim=1)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, heads * hd)
    return hidden_states + cross_attn_attn_gate.tanh() * F.linear(o, o_proj)
'''


def mllama_gated_cross_attention(m) -> ProblemDraft:
    d, heads, kv, hd, eps = (m.config["text_config.hidden_size"], m.config["text_config.num_attention_heads"],
                             m.config["text_config.num_key_value_heads"], m.config["text_config.derived.head_dim"],
                             m.config["text_config.rms_norm_eps"])
    patches = (m.config["vision_config.image_size"] // m.config["vision_config.patch_size"]) ** 2 + 1
    tiles = m.config["original_params.vision_max_num_chunks"]
    gpu = [{"batch_size": b, "text_len": t, "num_tiles": n, "tile_tokens": patches} for b, t, n in
           ((1, 128, 1), (1, 512, 4), (1, 1024, 4), (2, 1024, 4), (1, 2048, 2), (1, 4096, 4), (4, 512, 4),
            (2, 2048, 4), (8, 256, 4), (1, 8192, 4), (4, 2048, 4), (8, 1024, 4), (2, 8192, 4), (16, 512, 4),
            (8, 4096, 4), (16, 2048, 4))]
    cpu = [{"batch_size": b, "text_len": t, "num_tiles": n, "tile_tokens": p} for b, t, n, p in
           ((1, 4, 1, 5), (1, 16, 2, 5), (2, 8, 1, 17), (1, 32, 4, 5), (1, 64, 2, 17), (2, 16, 4, 10),
            (1, 100, 1, 50), (3, 20, 2, 17))]
    d0 = draft(
        m, f"{slug(m)}_gated_cross_attention_hq{heads}_hkv{kv}_d{hd}", "gated_cross_attention",
        f"{m.name} cross-attention decoder layer, attention half (MllamaCrossAttentionDecoderLayer with "
        f"MllamaTextCrossAttention): x + tanh(cross_attn_attn_gate) * o_proj(attn), where the text tokens "
        f"(input_layernorm RMSNorm, q_proj, per-head q_norm) attend to all vision tokens of their image (k_proj, "
        f"k_norm, v_proj of the projected vision states: up to {tiles} tiles x {patches} patches, image_size "
        f"{m.config['vision_config.image_size']} / patch_size {m.config['vision_config.patch_size']}, squared, "
        f"+ CLS); hidden_size {d}, {heads} heads, {kv} KV heads, head_dim {hd}, rms_norm_eps {eps}; no RoPE.",
        {"batch_size": (None, "sequences, one image each"), "text_len": (None, "text tokens"),
         "num_tiles": (None, f"tiles of the image (<= {tiles})"), "tile_tokens": (None, f"tokens per tile ({patches})"),
         "vision_len": ("num_tiles * tile_tokens", "vision tokens"), "hidden_size": (d, "text_config.hidden_size"),
         "kv_dim": (kv * hd, "num_key_value_heads x head_dim"), "head_dim": (hd, "head_dim"), "one": (1, "gate")},
        {"hidden_states": (["batch_size", "text_len", "hidden_size"], "bfloat16", 1.0),
         "cross_attention_states": (["batch_size", "vision_len", "hidden_size"], "bfloat16", 1.0),
         "input_layernorm_weight": (["hidden_size"], "bfloat16", 0.1, 1.0),
         "q_proj": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5),
         "k_proj": (["kv_dim", "hidden_size"], "bfloat16", d ** -0.5),
         "v_proj": (["kv_dim", "hidden_size"], "bfloat16", d ** -0.5),
         "o_proj": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5),
         "q_norm_weight": (["head_dim"], "bfloat16", 0.3, 2.0), "k_norm_weight": (["head_dim"], "bfloat16", 0.3, 2.0),
         "cross_attn_attn_gate": (["one"], "bfloat16", 0.5, 1.0)},
        {"output": (["batch_size", "text_len", "hidden_size"], "bfloat16")}, body(_MLLAMA_XATTN), gpu,
        subs={"HEADS": heads, "KV": kv, "HD": hd, "EPS": eps})
    return two_tiers(d0, "L2", ["attention"], cpu, kernel="gated_cross_attention")


_MLLAMA_TILE_POS = '''@torch.no_grad()
def run(hidden_state, aspect_ratio_ids, embedding, tile_embedding_weight, gate):
    b, tiles, patches, d = hidden_state.shape
    g = gate.tanh()
    x = hidden_state + ((1 - g) * embedding).view(1, 1, patches, d)
    tile = F.embedding(aspect_ratio_ids, tile_embedding_weight).reshape(b, tiles, patches, d)
    return x + g * tile
'''


def mllama_tile_position_embedding(m) -> ProblemDraft:
    d, tiles = m.config["vision_config.hidden_size"], m.config["original_params.vision_max_num_chunks"]
    patches = (m.config["vision_config.image_size"] // m.config["vision_config.patch_size"]) ** 2 + 1
    ratios = 8  # supported aspect ratios (w, h) with w * h <= 4 tiles: max_aspect_ratio_id = 8
    gpu = [{"batch_size": b, "tile_tokens": patches} for b in (1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 56, 64)]
    cpu = [{"batch_size": b, "tile_tokens": p} for b, p in ((1, 5), (2, 5), (1, 17), (3, 10), (2, 17), (1, 50),
                                                           (4, 26), (2, 65))]
    d0 = draft(
        m, f"{slug(m)}_vision_tile_position_embedding_c{d}_t{tiles}", "gated_position_embedding",
        f"{m.name} vision encoder position embedding (MllamaPrecomputedPositionEmbedding): x + (1 - tanh(gate)) * "
        f"the per-patch embedding ({patches} = (image_size/patch_size)^2 + 1 positions, hidden_size {d}), plus "
        f"tanh(gate) * the tile position embedding looked up by each image's aspect_ratio_id (an nn.Embedding of "
        f"{ratios + 1} aspect ratios x {tiles} tiles x {patches} x {d}), over all {tiles} (max_num_tiles) tiles.",
        {"batch_size": (None, "images"), "tile_tokens": (None, f"patches + CLS per tile ({patches})"),
         "max_num_tiles": (tiles, "vision_max_num_chunks"), "hidden_size": (d, "vision_config.hidden_size"),
         "num_ratios": (ratios + 1, "max_aspect_ratio_id + 1"),
         "tile_dim": ("max_num_tiles * tile_tokens * hidden_size", "tiles x patches x hidden"), "one": (1, "gate")},
        {"hidden_state": (["batch_size", "max_num_tiles", "tile_tokens", "hidden_size"], "bfloat16", 1.0),
         "aspect_ratio_ids": (["batch_size"], "int64", f"torch.randint(1, {ratios + 1}, shape, device=device)"),
         "embedding": (["tile_tokens", "hidden_size"], "bfloat16", 0.5),
         "tile_embedding_weight": (["num_ratios", "tile_dim"], "bfloat16", 0.5),
         "gate": (["one"], "bfloat16", 0.5)},
        {"output": (["batch_size", "max_num_tiles", "tile_tokens", "hidden_size"], "bfloat16")},
        _MLLAMA_TILE_POS, gpu)
    return two_tiers(d0, "L1", [], cpu, kernel="gated_position_embedding")


_MLLAMA_VISION_ATTN = '''@torch.no_grad()
def run(hidden_state, aspect_ratio_mask, num_patches, ln_weight, ln_bias, q_proj, k_proj, v_proj, o_proj,
        gate_attn):
    b, tiles, padded, d = hidden_state.shape
    heads = @HEADS@
    # _prepare_aspect_ratio_attention_mask: padding tiles and padding patches masked against each other
    mask = aspect_ratio_mask.view(b, tiles, 1, 1).to(hidden_state.dtype).repeat(1, 1, padded, 1)
    mask[:, :, int(num_patches[0]):] = 0
    mask = (1 - mask).reshape(b, tiles * padded, 1)
    mask = (mask @ mask.transpose(-1, -2) * torch.finfo(hidden_state.dtype).min).unsqueeze(1)
    x = hidden_state.reshape(b, tiles * padded, d)
    h = F.layer_norm(x, (d,), ln_weight, ln_bias, @EPS@)
    q, k, v = (F.linear(h, w).view(b, -1, heads, d // heads).transpose(1, 2) for w in (q_proj, k_proj, v_proj))
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(b, -1, d)
    return (x + gate_attn.tanh() * F.linear(o, o_proj)).view(b, tiles, padded, d)
'''


def mllama_vision_global_attention(m) -> ProblemDraft:
    d, heads, eps = (m.config["vision_config.hidden_size"], m.config["vision_config.num_attention_heads"],
                     m.config["vision_config.norm_eps"])
    tiles = m.config["original_params.vision_max_num_chunks"]
    patches = (m.config["vision_config.image_size"] // m.config["vision_config.patch_size"]) ** 2 + 1
    gpu = [{"batch_size": b, "tile_tokens": patches} for b in (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32)]
    cpu = [{"batch_size": b, "tile_tokens": p} for b, p in ((1, 5), (2, 5), (1, 17), (3, 10), (2, 17), (1, 50),
                                                           (4, 26), (1, 65))]
    d0 = draft(
        m, f"{slug(m)}_vision_gated_tile_attention_c{d}_h{heads}", "tile_attention",
        f"{m.name} vision encoder gated self-attention over all tiles of an image (MllamaVisionEncoderLayer with "
        f"is_gated, the global encoder of the two-stage tower): x + tanh(gate_attn) * o_proj(MHA(LayerNorm(x), eps "
        f"{eps})) on max_num_tiles {tiles} x {patches} patches (padded to a multiple of 8) jointly, hidden_size {d}, "
        f"{heads} heads, no biases; the attention mask of _prepare_aspect_ratio_attention_mask (outer product of the "
        "padding indicator: padding tiles / patches masked only against each other, as the code does); each image "
        "uses 1-4 tiles (aspect_ratio_mask).",
        {"batch_size": (None, "images"), "tile_tokens": (None, f"patches + CLS per tile ({patches})"),
         "padded": ("(tile_tokens + 7) // 8 * 8", "tile tokens padded to a multiple of 8"),
         "max_num_tiles": (tiles, "vision_max_num_chunks"), "hidden_size": (d, "vision_config.hidden_size"),
         "one": (1, "gate")},
        {"hidden_state": (["batch_size", "max_num_tiles", "padded", "hidden_size"], "bfloat16", 1.0),
         "aspect_ratio_mask": (["batch_size", "max_num_tiles"], "int64",
                               "(torch.arange(shape[1], device=device)[None, :] < "
                               "(torch.arange(shape[0], device=device)[:, None] % shape[1] + 1)).long()"),
         "num_patches": (["one"], "int64", "torch.tensor([a['tile_tokens']], device=device)"),
         "ln_weight": (["hidden_size"], "bfloat16", 0.1, 1.0), "ln_bias": (["hidden_size"], "bfloat16", 0.1),
         "q_proj": (["hidden_size", "hidden_size"], "bfloat16", 2 * d ** -0.5),
         "k_proj": (["hidden_size", "hidden_size"], "bfloat16", 2 * d ** -0.5),
         "v_proj": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5),
         "o_proj": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5),
         "gate_attn": (["one"], "bfloat16", 0.5, 1.0)},
        {"output": (["batch_size", "max_num_tiles", "padded", "hidden_size"], "bfloat16")},
        _MLLAMA_VISION_ATTN, gpu, subs={"HEADS": heads, "EPS": eps})
    return two_tiers(d0, "L2", ["attention"], cpu, kernel="tile_attention")


# ================================ vision encoders: DINOv2, SAM, SigLIP, ViT-H, CLIP ============================

_SWIGLU_FFN = '''@torch.no_grad()
def run(hidden_states, norm_weight, norm_bias, w12_weight, w12_bias, w3_weight, w3_bias, ls_gamma):
    h = F.layer_norm(hidden_states, (hidden_states.shape[-1],), norm_weight, norm_bias, @EPS@)
    x1, x2 = F.linear(h, w12_weight, w12_bias).chunk(2, dim=-1)
    return hidden_states + ls_gamma * F.linear(F.silu(x1) * x2, w3_weight, w3_bias)
'''
_SWIGLU_FFN_BWD = '''def run(hidden_states, norm_weight, norm_bias, w12_weight, w12_bias, w3_weight, w3_bias, ls_gamma, grad_output):
    # Parameter gradients sum over every token: accumulated in fp32, so the result does not depend on the
    # summation order (thread count).
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    originals = (hidden_states, norm_weight, norm_bias, w12_weight, w12_bias, w3_weight, w3_bias, ls_gamma)
    with torch.enable_grad():
        params = [t.detach().to(compute).requires_grad_() for t in originals]
        x, nw, nb, w12, b12, w3, b3, gamma = params
        h = F.layer_norm(x, (x.shape[-1],), nw, nb, @EPS@)
        x1, x2 = F.linear(h, w12, b12).chunk(2, dim=-1)
        out = x + gamma * F.linear(F.silu(x1) * x2, w3, b3)
        grads = torch.autograd.grad(out, params, grad_output.to(compute))
    return tuple(g.to(t.dtype) for g, t in zip(grads, originals))
'''


def dinov2_swiglu_ffn(m, *, backward: bool = False) -> ProblemDraft:
    d, ratio, eps = m.config["hidden_size"], m.config["mlp_ratio"], m.config["layer_norm_eps"]
    hidden = (int(d * ratio * 2 / 3) + 7) // 8 * 8
    tokens = (m.config["image_size"] // m.config["patch_size"]) ** 2 + 1
    inputs = {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
              "norm_weight": (["hidden_size"], "bfloat16", 0.1, 1.0), "norm_bias": (["hidden_size"], "bfloat16", 0.1),
              "w12_weight": (["two_ffn", "hidden_size"], "bfloat16", d ** -0.5),
              "w12_bias": (["two_ffn"], "bfloat16", 0.1),
              "w3_weight": (["hidden_size", "ffn_hidden"], "bfloat16", hidden ** -0.5),
              "w3_bias": (["hidden_size"], "bfloat16", 0.1),
              "ls_gamma": (["hidden_size"], "bfloat16", 0.3, m.config["layerscale_init"])}
    axes = {"num_tokens": (None, f"tokens: images x {tokens} (1 + (518/14)^2)"), "hidden_size": (d, "hidden_size"),
            "ffn_hidden": (hidden, "(int(hidden_size * mlp_ratio * 2/3) + 7) // 8 * 8"),
            "two_ffn": (2 * hidden, "fused w12 output")}
    what = (f"{m.name} block FFN half with LayerScale: x + ls2 * w3(SiLU(x1) * x2), (x1, x2) = chunk(w12(LayerNorm(x))) "
            f"(ffn_layer swiglufused: SwiGLUFFNFused, hidden {hidden} from hidden_size {d} x mlp_ratio {ratio} x 2/3 "
            f"rounded up to 8; biases; layer_norm_eps {eps}; LayerScale initialised at layerscale_init "
            f"{m.config['layerscale_init']}), at image_size {m.config['image_size']} = {tokens} tokens per image.")
    gpu = [{"num_tokens": tokens * n} for n in (1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64, 80)]
    cpu = [{"num_tokens": n} for n in (1, 2, 5, 10, 17, 26, 37, 50)]
    if backward:
        inputs["grad_output"] = (["num_tokens", "hidden_size"], "bfloat16", 1.0)
        outs = {f"grad_{n}": (spec[0], "bfloat16") for n, spec in inputs.items() if n != "grad_output"}
        d0 = draft(m, f"{slug(m)}_layerscale_swiglu_ffn_backward_h{d}_i{hidden}", "swiglu_ffn_backward",
                   "Backward of the " + what + " Returns the gradients of the input and all seven parameters given "
                   "grad_output (fine-tuning; fp32 accumulation).", axes, inputs, outs, _SWIGLU_FFN_BWD, gpu,
                   backward=True, subs={"EPS": eps})
    else:
        d0 = draft(m, f"{slug(m)}_layerscale_swiglu_ffn_h{d}_i{hidden}", "swiglu_ffn", what, axes, inputs,
                   {"output": (["num_tokens", "hidden_size"], "bfloat16")}, _SWIGLU_FFN, gpu, subs={"EPS": eps})
    return two_tiers(d0, "L2", [], cpu, kernel="swiglu_ffn")


def dinov2_small_attention(m) -> ProblemDraft:
    gpu = grid(batch_size=(1, 2, 4, 8, 16, 32, 64, 128, 192, 256, 1, 16, 64, 256, 512, 1024),
               num_tokens=(1370,) * 10 + (257,) * 6)
    d0 = layerscale_attention(m, gpu)
    cpu = grid(batch_size=(1, 1, 2, 1, 2, 1, 3, 1), num_tokens=(5, 17, 17, 37, 50, 65, 26, 101))
    return two_tiers(d0, "L2", ["attention"], cpu, kernel="vit_attention",
                     name=f"{slug(m)}_layerscale_attention_h{m.config['hidden_size']}_heads{m.config['num_attention_heads']}")


def sam_huge_window_attention(m) -> ProblemDraft:
    gpu = [{"batch_size": b, "height": 64, "width": 64} for b in (1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40)]
    d0 = sam_window_attention(m, gpu)
    cpu = [{"batch_size": b, "height": h, "width": w} for b, h, w in
           ((1, 14, 14), (1, 14, 20), (1, 20, 20), (2, 14, 14), (1, 28, 14), (1, 28, 28), (2, 20, 14), (1, 16, 30))]
    c, heads, ws = m.config["encoder_embed_dim"], m.config["encoder_num_heads"], m.config["window_size"]
    return two_tiers(d0, "L2", ["attention"], cpu, kernel="window_attention",
                     name=f"{slug(m)}_windowed_attention_c{c}_h{heads}_w{ws}")


_SAM_GLOBAL = '''@torch.no_grad()
def run(query, key, value, rel_pos_h, rel_pos_w):
    b, heads, n, hd = query.shape
    acc = _acc(query)
    side = (rel_pos_h.shape[0] + 1) // 2
    q, k, v = (t.reshape(b * heads, n, hd).to(acc) for t in (query, key, value))
    attn = (q * hd ** -0.5) @ k.transpose(-2, -1)
    # get_rel_pos (table length 2 * side - 1: no resizing) and add_decomposed_rel_pos
    idx = torch.arange(side, device=q.device)[:, None] - torch.arange(side, device=q.device)[None, :] + (side - 1)
    r_q = q.reshape(b * heads, side, side, hd)
    rel_h = torch.einsum("bhwc,hkc->bhwk", r_q, rel_pos_h.to(acc)[idx])
    rel_w = torch.einsum("bhwc,wkc->bhwk", r_q, rel_pos_w.to(acc)[idx])
    attn = attn.view(b * heads, side, side, side, side) + rel_h[:, :, :, :, None] + rel_w[:, :, :, None, :]
    attn = attn.view(b * heads, n, n).softmax(dim=-1)
    return (attn @ v).view(b, heads, n, hd).to(query.dtype)
'''


def sam_global_attention(m) -> ProblemDraft:
    c, heads = m.config["encoder_embed_dim"], m.config["encoder_num_heads"]
    hd = c // heads
    grid = m.config["image_size"] // m.config["patch_size"]
    qkv = (["batch_size", "num_heads", "num_tokens", "head_dim"], "bfloat16")
    d0 = draft(
        m, f"{slug(m)}_global_attention_rel_pos_h{heads}_d{hd}", "attention_rel_pos",
        f"{m.name} global-attention block core (the encoder_global_attn_indexes blocks): attention over all "
        f"{grid}x{grid} patches of a 1024-px image (image_size / patch_size), {heads} heads of head_dim {hd} "
        f"(encoder_embed_dim {c}), with decomposed relative position bias: get_rel_pos gathers rel_pos_h / rel_pos_w "
        f"(2*{grid}-1 entries) by q-k offset, add_decomposed_rel_pos adds einsum(q, R_h) over rows and einsum(q, R_w) "
        "over columns to the scaled scores; softmax in fp32 (as transformers' SamVisionAttention), times v.",
        {"batch_size": (None, "images"), "grid": (None, f"patches per side ({grid})"),
         "num_tokens": ("grid * grid", "patches"), "rel_len": ("2 * grid - 1", "relative offsets per axis"),
         "num_heads": (heads, "encoder_num_heads"), "head_dim": (hd, "encoder_embed_dim / encoder_num_heads")},
        {"query": (*qkv, 1.0), "key": (*qkv, 1.0), "value": (*qkv, 1.0),
         "rel_pos_h": (["rel_len", "head_dim"], "bfloat16", 0.1), "rel_pos_w": (["rel_len", "head_dim"], "bfloat16", 0.1)},
        {"output": qkv}, body(_SAM_GLOBAL), [{"batch_size": b, "grid": grid} for b in range(1, 17)])
    cpu = [{"batch_size": b, "grid": g} for b, g in ((1, 4), (1, 8), (2, 8), (1, 12), (2, 12), (1, 16), (3, 6), (1, 10))]
    return two_tiers(d0, "L1", ["attention"], cpu, kernel="attention_rel_pos")


_MAP_HEAD = '''@torch.no_grad()
def run(hidden_state, probe, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias, ln_weight, ln_bias,
        fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    b, n, d = hidden_state.shape
    heads = @HEADS@
    wq, wk, wv = in_proj_weight.chunk(3)
    bq, bk, bv = in_proj_bias.chunk(3)
    q = F.linear(probe.view(1, 1, d).expand(b, 1, d), wq, bq).view(b, 1, heads, -1).transpose(1, 2)
    k = F.linear(hidden_state, wk, bk).view(b, n, heads, -1).transpose(1, 2)
    v = F.linear(hidden_state, wv, bv).view(b, n, heads, -1).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, 1, d)
    x = F.linear(o, out_proj_weight, out_proj_bias)
    h = F.layer_norm(x, (d,), ln_weight, ln_bias, @EPS@)
    x = x + F.linear(F.gelu(F.linear(h, fc1_weight, fc1_bias), approximate="tanh"), fc2_weight, fc2_bias)
    return x[:, 0]
'''


def siglip_map_head(m) -> ProblemDraft:
    d, inter, heads, eps = (m.config["vision_config.hidden_size"], m.config["vision_config.intermediate_size"],
                            m.config["vision_config.num_attention_heads"], m.config["vision_config.layer_norm_eps"])
    tokens = (m.config["vision_config.image_size"] // m.config["vision_config.patch_size"]) ** 2
    gpu = [{"batch_size": b, "num_tokens": tokens} for b in (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256,
                                                            320, 384)]
    cpu = [{"batch_size": b, "num_tokens": n} for b, n in ((1, 4), (2, 4), (1, 16), (4, 9), (2, 25), (1, 49), (8, 16),
                                                          (3, 36))]
    d0 = draft(
        m, f"{slug(m)}_map_pooling_head_c{d}_h{heads}", "attention_pooling",
        f"{m.name} vision head (SiglipMultiheadAttentionPoolingHead): a learned probe token attends to the "
        f"{tokens} patch tokens ((image_size/patch_size)^2 at 384 px) with nn.MultiheadAttention ({heads} heads, "
        f"packed in_proj with bias, out_proj), then x + MLP(LayerNorm(x)) (intermediate_size {inter}, "
        f"gelu_pytorch_tanh, layer_norm_eps {eps}); returns the pooled embedding per image, hidden_size {d}.",
        {"batch_size": (None, "images"), "num_tokens": (None, f"patch tokens ({tokens})"),
         "hidden_size": (d, "vision_config.hidden_size"), "three_hidden": (3 * d, "packed q/k/v"),
         "intermediate_size": (inter, "vision_config.intermediate_size")},
        {"hidden_state": (["batch_size", "num_tokens", "hidden_size"], "bfloat16", 1.0),
         "probe": (["hidden_size"], "bfloat16", 1.0),
         "in_proj_weight": (["three_hidden", "hidden_size"], "bfloat16", 2 * d ** -0.5),
         "in_proj_bias": (["three_hidden"], "bfloat16", 0.1),
         "out_proj_weight": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5),
         "out_proj_bias": (["hidden_size"], "bfloat16", 0.1),
         "ln_weight": (["hidden_size"], "bfloat16", 0.1, 1.0), "ln_bias": (["hidden_size"], "bfloat16", 0.1),
         "fc1_weight": (["intermediate_size", "hidden_size"], "bfloat16", d ** -0.5),
         "fc1_bias": (["intermediate_size"], "bfloat16", 0.1),
         "fc2_weight": (["hidden_size", "intermediate_size"], "bfloat16", inter ** -0.5),
         "fc2_bias": (["hidden_size"], "bfloat16", 0.1)},
        {"output": (["batch_size", "hidden_size"], "bfloat16")}, _MAP_HEAD, gpu, subs={"HEADS": heads, "EPS": eps})
    return two_tiers(d0, "L2", ["attention"], cpu, kernel="attention_pooling")


_VIT_ATTN = '''@torch.no_grad()
def run(hidden_states, ln_weight, ln_bias, qkv_weight, qkv_bias, out_weight, out_bias):
    b, n, d = hidden_states.shape
    heads = @HEADS@
    h = F.layer_norm(hidden_states, (d,), ln_weight, ln_bias, 1e-06)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4).unbind(0)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
    return hidden_states + F.linear(o, out_weight, out_bias)
'''


def vit_h_attention_block(m) -> ProblemDraft:
    d, heads, hd = m.config["hidden_size"], m.config["num_attention_heads"], m.config["derived.head_dim"]
    tokens = (224 // m.config["patch_size"]) ** 2 + 1
    gpu = [{"batch_size": b, "num_tokens": tokens} for b in (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 160, 192, 256, 320,
                                                            384, 512)]
    cpu = [{"batch_size": b, "num_tokens": n} for b, n in ((1, 5), (2, 5), (1, 17), (4, 10), (2, 26), (1, 50),
                                                          (3, 37), (1, 65))]
    d0 = draft(
        m, f"{slug(m)}_attention_block_c{d}_h{heads}", "vit_attention",
        f"{m.name} encoder attention half-block (pre-LN, vit_jax Encoder1DBlock): x + out(MHSA(LayerNorm(x))) with "
        f"q/k/v and output projections with bias (packed here), hidden_size {d}, num_attention_heads {heads}, head_dim "
        f"{hd}, bidirectional over CLS + (224/{m.config['patch_size']})^2 = {tokens} tokens at 224 px; LayerNorm eps "
        "1e-6 (flax's default).",
        {"batch_size": (None, "images"), "num_tokens": (None, f"CLS + patches ({tokens} at 224 px)"),
         "hidden_size": (d, "hidden_size"), "three_hidden": (3 * d, "3 x hidden_size")},
        {"hidden_states": (["batch_size", "num_tokens", "hidden_size"], "bfloat16", 1.0),
         "ln_weight": (["hidden_size"], "bfloat16", 0.1, 1.0), "ln_bias": (["hidden_size"], "bfloat16", 0.1),
         "qkv_weight": (["three_hidden", "hidden_size"], "bfloat16", 2 * d ** -0.5),
         "qkv_bias": (["three_hidden"], "bfloat16", 0.1),
         "out_weight": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5),
         "out_bias": (["hidden_size"], "bfloat16", 0.1)},
        {"output": (["batch_size", "num_tokens", "hidden_size"], "bfloat16")}, _VIT_ATTN, gpu, subs={"HEADS": heads})
    return two_tiers(d0, "L2", ["attention"], cpu, kernel="vit_attention")


_ATTN_CORE = '''@torch.no_grad()
def run(query, key, value):
    return F.scaled_dot_product_attention(query, key, value)
'''
_ATTN_CORE_BWD = '''def run(query, key, value, grad_output):
    compute = torch.promote_types(query.dtype, torch.float32)
    with torch.enable_grad():
        q, k, v = (t.detach().to(compute).requires_grad_() for t in (query, key, value))
        o = F.scaled_dot_product_attention(q, k, v)
        grads = torch.autograd.grad(o, (q, k, v), grad_output.to(compute))
    return tuple(g.to(query.dtype) for g in grads)
'''


def vision_attention_core(m, heads: int, hd: int, tokens: int, gpu_batches, what: str, *,
                          backward: bool = False) -> ProblemDraft:
    shape = ["batch_size", "num_heads", "num_tokens", "head_dim"]
    inputs = {"query": (shape, "bfloat16", 1.0), "key": (shape, "bfloat16", 1.0), "value": (shape, "bfloat16", 1.0)}
    axes = {"batch_size": (None, "images"), "num_tokens": (None, f"CLS + patches ({tokens} at native resolution)"),
            "num_heads": (heads, "heads"), "head_dim": (hd, "head_dim")}
    gpu = [{"batch_size": b, "num_tokens": tokens} for b in gpu_batches]
    cpu = [{"batch_size": b, "num_tokens": n} for b, n in ((1, 5), (2, 5), (1, 17), (4, 10), (2, 26), (1, 50),
                                                          (3, 37), (1, 65))]
    text = (f"{m.name} vision transformer attention core: bidirectional softmax(q k^T / sqrt({hd})) v over {tokens} "
            f"tokens per image, {heads} heads of head_dim {hd}. {what}")
    if backward:
        inputs["grad_output"] = (shape, "bfloat16", 1.0)
        d0 = draft(m, f"{slug(m)}_vision_attention_backward_h{heads}_d{hd}_n{tokens}", "attention_backward",
                   "Backward of the " + text + " Returns dq, dk, dv given grad_output (contrastive pre-training; fp32 "
                   "accumulation).", axes, inputs,
                   {"grad_query": (shape, "bfloat16"), "grad_key": (shape, "bfloat16"), "grad_value": (shape, "bfloat16")},
                   _ATTN_CORE_BWD, gpu, backward=True)
    else:
        d0 = draft(m, f"{slug(m)}_vision_attention_h{heads}_d{hd}_n{tokens}", "attention", text, axes, inputs,
                   {"output": (shape, "bfloat16")}, _ATTN_CORE, gpu)
    return two_tiers(d0, "L1", ["attention"], cpu, kernel="attention")


def drafts() -> list[ProblemDraft]:
    openclip_heads = OPENCLIP_H.config["vision_config.width"] // OPENCLIP_H.config["vision_config.head_width"]
    openclip_tokens = (OPENCLIP_H.config["vision_config.image_size"] // OPENCLIP_H.config["vision_config.patch_size"]) ** 2 + 1
    llava_tokens = (LLAVA.config["vision_config.image_size"] // LLAVA.config["vision_config.patch_size"]) ** 2 + 1
    llava_heads = LLAVA.config["vision_config.num_attention_heads"]
    return [
        # Qwen-VL family
        qwen2_vl_rope_2d(QWEN2_VL_7B),
        qwen2_vl_varlen_attention(QWEN2_VL_7B),
        mrope(QWEN2_VL_7B, backward=True),
        qwen25_vl_window_attention(QWEN25_VL_3B),
        mrope(QWEN25_VL_3B),
        qwen3_vl_qknorm_interleaved_mrope(QWEN3_VL_235B),
        qwen3_vl_pos_interpolate(QWEN3_VL_30B),
        qwen3_vl_deepstack_merger(QWEN3_VL_8B),
        qwen3_vl_deepstack_inject(QWEN3_VL_8B),
        # Pixtral, InternVL, LLaVA, Phi-3.5-vision, Llama-3.2-Vision
        pixtral_rope_2d(PIXTRAL),
        pixtral_attention_layer(PIXTRAL),
        internvl_projector(INTERNVL),
        llava_projector(LLAVA),
        vision_attention_core(LLAVA, llava_heads, LLAVA.config["vision_config.hidden_size"] // llava_heads,
                              llava_tokens, (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 80, 96, 112, 128, 160, 192),
                              "CLIP ViT-L/14 at image_size 336 (the LLaVA-1.5 tower, vision_config)."),
        phi35_vision_hd_projection(PHI35_VISION),
        mllama_gated_cross_attention(MLLAMA),
        mllama_tile_position_embedding(MLLAMA),
        mllama_vision_global_attention(MLLAMA),
        # vision encoders
        dinov2_swiglu_ffn(DINOV2_G),
        dinov2_swiglu_ffn(DINOV2_G, backward=True),
        dinov2_small_attention(DINOV2_S),
        sam_huge_window_attention(SAM_H),
        sam_global_attention(SAM_L),
        siglip_map_head(SIGLIP),
        vit_h_attention_block(VIT_H),
        vision_attention_core(OPENCLIP_H, openclip_heads, OPENCLIP_H.config["vision_config.head_width"],
                              openclip_tokens, (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 80, 96, 112, 128, 160, 192),
                              "OpenCLIP ViT-H/14 at its native image_size 224 (width / head_width heads).",
                              backward=True),
    ]
