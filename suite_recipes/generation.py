"""Image and video generation blocks: DiT / MM-DiT joint attention, AdaLN modulation, UNet and VAE blocks.

Twelve diffusion and video models of ``model-configs.json`` that the suite did not use, each with at
least one problem taken from its real code (the function named per problem):

- FLUX.1-schnell (BFL ``flux/modules/layers.py``): ``EmbedND`` + ``apply_rope`` (3-axis RoPE over
  (0, row, column) ids, axes_dim 16/56/56), ``DoubleStreamBlock`` (the joint-attention half) and
  ``SingleStreamBlock`` (parallel attention + MLP from one ``linear1``);
- Hunyuan-DiT DiT-g/2 (``hydit/modules/models.py`` ``HunYuanDiTBlock``, ``attn_layers.py``): the long skip
  (``skip_norm`` over cat(x, skip) then ``skip_linear``), the shift-only modulation, self-attention with
  q/k LayerNorm and 2-D RoPE, and the cross-attention to 77 CLIP + 256 mT5 tokens (RoPE on q only);
- Sana 1600M (``diffusion/model/nets/sana_multi_scale.py`` ``SanaMSBlock``, diffusers
  ``SanaLinearAttnProcessor2_0``, ``GLUMBConv``): ReLU linear attention (70 heads of 32) and the GLU-MBConv
  Mix-FFN, both with the adaLN-single scale_shift_table modulation;
- SDXL base and SD 2.1 768-v (sgm ``modules/attention.py`` ``SpatialTransformer`` /
  ``BasicTransformerBlock`` / ``GEGLU``, ``openaimodel.py`` ``ResBlock``);
- Stable Video Diffusion (sgm ``modules/video_attention.py`` ``SpatialVideoTransformer`` /
  ``VideoTransformerBlock``, ``diffusionmodules/video_model.py`` ``VideoResBlock``, ``util.py``
  ``AlphaBlender`` with merge_strategy learned_with_images);
- Mochi 1 preview (genmo ``asymm_models_joint.py`` ``AsymmetricAttention.prepare_qkv`` / ``run_attention``,
  ``residual_tanh_gated_rmsnorm``, ``temporal_rope.apply_rotary_emb_qk_real``);
- CogVideoX-2B / 5B / 1.5-5B (diffusers ``transformer_cogvideox.py`` ``CogVideoXLayerNormZero``,
  ``CogVideoXAttnProcessor2_0``, ``embeddings.CogVideoXPatchEmbed`` with patch_size_t);
- Wan2.2-T2V-A14B and Wan2.2-TI2V-5B (``wan/modules/model.py`` ``WanAttentionBlock`` with per-token
  modulation, ``WanModel.forward``'s per-token time embedding; ``wan/modules/vae2_2.py`` ``ResidualBlock`` /
  ``CausalConv3d`` with the chunked decoder's feature cache). The A14B's mixture over timesteps picks one
  of two identical 14B experts by the boundary (t >= 0.875 x 1000: high-noise expert), so its problem is
  the selected expert's block.

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 or more GPU-scale workloads at the models' native
sizes (1024 px images: 64x64 patches and 77/256/512 text tokens; CogVideoX 13x60x90 latents; Wan 720p
clips of 21 latent frames; Mochi 28x60x106), ``workload.cpu.jsonl`` 8 small ones. Per-problem choices
are in each description.
"""

from __future__ import annotations


from suite_recipes.shapes import grid
from suite_recipes.builder import slug
from suite_recipes.l2 import body, draft
from suite_recipes.models import model
from suite_recipes.sweeps import tiered
from suite_recipes.snippets import WAN_ROPE_3D
from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for

# --- models (values copied from src/solbench/suite/data/model-configs.json) -----------------------------

FLUX_SCHNELL = model("FLUX.1-schnell (transformer)", "black-forest-labs/FLUX.1-schnell", "diffusion",
                     {"hidden_size": 3072, "num_heads": 24, "mlp_ratio": 4.0, "axes_dim": [16, 56, 56],
                      "theta": 10000, "qkv_bias": True, "patch_size": 2})
HUNYUAN_DIT = model("Hunyuan-DiT (DiT-g/2)", "Tencent-Hunyuan/HunyuanDiT", "diffusion",
                    {"hidden_size": 1408, "num_heads": 16, "qk_norm": True, "norm": "layer", "patch_size": 2,
                     "text_states_dim": 1024, "text_len": 77, "text_len_t5": 256, "image_size": [1024, 1024]})
SANA_1600M = model("Sana 1600M 1024px", "Efficient-Large-Model/Sana_1600M_1024px", "diffusion",
                   {"hidden_size": 2240, "attn_type": "linear", "ffn_type": "glumbconv", "mlp_ratio": 2.5,
                    "mlp_acts": ["silu", "silu", None], "use_pe": False, "patch_size": 1, "image_size": 1024,
                    "vae_downsample_rate": 32})
SDXL_UNET = model("SDXL base 1.0 (UNet)", "stabilityai/stable-diffusion-xl-base-1.0", "diffusion",
                  {"model_channels": 320, "channel_mult": [1, 2, 4], "transformer_depth": [1, 2, 10],
                   "num_head_channels": 64, "context_dim": 2048, "use_linear_in_transformer": True})
SD21_UNET = model("Stable Diffusion 2.1 768-v (UNet)", "stabilityai/stable-diffusion-2-1", "diffusion",
                  {"model_channels": 320, "channel_mult": [1, 2, 4, 4], "transformer_depth": 1,
                   "num_head_channels": 64, "context_dim": 1024, "use_linear_in_transformer": True})
SVD = model("Stable Video Diffusion (VideoUNet)", "stabilityai/stable-video-diffusion-img2vid", "video",
            {"model_channels": 320, "num_head_channels": 64, "context_dim": 1024, "extra_ff_mix_layer": True,
             "use_spatial_context": True, "merge_strategy": "learned_with_images", "video_kernel_size": [3, 1, 1]})
MOCHI = model("Mochi 1 preview (AsymmDiT)", "genmo/mochi-1-preview", "video",
              {"hidden_size_x": 3072, "hidden_size_y": 1536, "num_heads": 24, "qk_norm": True, "qkv_bias": False,
               "out_bias": True, "t5_token_length": 256, "patch_size": 2})
COGVIDEOX_2B = model("CogVideoX-2B", "THUDM/CogVideoX-2b", "video",
                     {"hidden_size": 1920, "time_embed_dim": 512, "text_length": 226, "elementwise_affine": True,
                      "num_frames": 49, "time_compressed_rate": 4, "latent_height": 60, "latent_width": 90,
                      "patch_size": 2})
COGVIDEOX_5B = model("CogVideoX-5B", "THUDM/CogVideoX-5b", "video",
                     {"hidden_size": 3072, "num_attention_heads": 48, "derived.head_dim": 64, "text_length": 226,
                      "num_frames": 49, "time_compressed_rate": 4, "latent_height": 60, "latent_width": 90,
                      "patch_size": 2})
COGVIDEOX15_5B = model("CogVideoX1.5-5B", "THUDM/CogVideoX1.5-5B", "video",
                       {"hidden_size": 3072, "in_channels": 16, "patch_size": [2, 2, 2], "text_hidden_size": 4096,
                        "text_length": 224, "num_frames": 81, "time_compressed_rate": 4})
WAN22_A14B = model("Wan2.2-T2V-A14B", "Wan-AI/Wan2.2-T2V-A14B", "video",
                   {"dim": 5120, "num_heads": 40, "qk_norm": True, "eps": 1e-06, "patch_size": [1, 2, 2],
                    "vae_stride": [4, 8, 8], "boundary": 0.875})
WAN22_TI2V_5B = model("Wan2.2-TI2V-5B", "Wan-AI/Wan2.2-TI2V-5B", "video",
                      {"dim": 3072, "freq_dim": 256, "patch_size": [1, 2, 2], "vae_stride": [4, 16, 16],
                       "frame_num": 121})

# --- shared pieces of the references --------------------------------------------------------------------

_GEN_HELPERS = '''

def _layer_norm(x, weight, bias, eps):
    """LayerNorm in the working precision (fp32, or fp64 in the golden run), back to x's dtype."""
    xf = x.to(_acc(x))
    out = F.layer_norm(xf, (x.shape[-1],), None if weight is None else weight.to(xf.dtype),
                       None if bias is None else bias.to(xf.dtype), eps)
    return out.to(x.dtype)


def _rope_pairs(x, cos, sin):
    """Rotate interleaved pairs (x0, x1) of the last dim by angles with cos/sin [..., d/2] (fp32 math)."""
    acc = _acc(x)
    xf = x.to(acc).unflatten(-1, (-1, 2))
    x0, x1 = xf[..., 0], xf[..., 1]
    cos, sin = cos.to(acc), sin.to(acc)
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2).to(x.dtype)


def _sdpa(q, k, v):
    """Bidirectional attention over [b, heads, len, head_dim]."""
    return F.scaled_dot_product_attention(q, k, v)
'''


def _body(text: str) -> str:
    return body(_GEN_HELPERS + "\n\n" + text)


def _tiers(d: ProblemDraft, set_name: str, families: tuple, kernel: str, gpu: list[dict],
           tolerance: str | None = None) -> ProblemDraft:
    """The set, the family tags, and the two tiers (`sweeps.tiered`): ``gpu`` becomes workload.jsonl, the draft's
    own small workloads workload.cpu.jsonl. ``tolerance`` names the dtype whose tolerance applies where an fp32
    output carries a bf16 computation (Wan's fp32 residual stream)."""
    tags = [f"family:{f}" for f in families] + [f"kernel:{kernel}"]
    return tiered(d, gpu, shift="none", set=set_name, extra_tags=tags + list(d.extra_tags),
                  tolerance=tolerance_for(tolerance) if tolerance else d.tolerance)




# ================================ FLUX.1-schnell ==========================================================

_FLUX_ROPE_TABLE = '''def _flux_ids(a, device):
    """BFL sampling.prepare: text ids are zeros, image ids (0, row, column) of the 2x2-patch grid."""
    rows = torch.arange(a["height"], device=device, dtype=torch.float32)
    cols = torch.arange(a["width"], device=device, dtype=torch.float32)
    grid = torch.stack(torch.meshgrid(torch.zeros(1, device=device), rows, cols, indexing="ij"), dim=-1)
    txt = torch.zeros(a["txt_len"], 3, device=device)
    return torch.cat((txt, grid.reshape(-1, 3)), dim=0)


def _flux_angles(ids, axes_dim, theta):
    """EmbedND: per axis, positions x theta^(-2i/d) (rope() in float64 in BFL; here the working precision)."""
    parts = []
    for axis, dim in enumerate(axes_dim):
        acc = torch.float64 if ids.dtype == torch.float64 else torch.float32
        scale = torch.arange(0, dim, 2, dtype=acc, device=ids.device) / dim
        parts.append(ids[..., axis].to(acc)[..., None] * (1.0 / theta ** scale))
    return torch.cat(parts, dim=-1)


def _flux_table(a, device, which):
    angle = _flux_angles(_flux_ids(a, device), @AXES@, @THETA@)
    return angle.cos() if which == "cos" else angle.sin()
'''

_FLUX_ROPE = _FLUX_ROPE_TABLE + '''

@torch.no_grad()
def run(q, k, ids):
    """EmbedND(ids) then apply_rope on q and k: pairs (x[2i], x[2i+1]) rotate by the concatenated angles of the
    three axes ([16, 56, 56] dims -> 8 + 28 + 28 pairs of the head_dim 128)."""
    angle = _flux_angles(ids, @AXES@, @THETA@)[:, None]  # [b, 1, len, 64]
    return _rope_pairs(q, angle.cos(), angle.sin()), _rope_pairs(k, angle.cos(), angle.sin())
'''

_IDS_INPUT = "_flux_ids(a, device)[None].expand(a['batch_size'], -1, -1).contiguous()"


def flux_rope(m) -> ProblemDraft:
    d, heads, axes_dim, theta = m.config["hidden_size"], m.config["num_heads"], m.config["axes_dim"], m.config["theta"]
    hd = d // heads
    subs = {"AXES": axes_dim, "THETA": float(theta)}
    return _tiers(draft(
        m, f"{slug(m)}_rope_3axis_q_k_h{heads}_d{hd}", "rope",
        f"{m.name} 3-axis rotary embedding of the joint [text, image] sequence (BFL EmbedND + apply_rope in "
        f"flux/math.py): ids (axis 0 = 0, axis 1 = patch row, axis 2 = patch column; text ids all 0) give "
        f"angles pos x theta^(-2i/d) per axis with axes_dim {axes_dim} (theta {theta}), concatenated to the "
        f"head_dim {hd} = hidden_size {d} / num_heads {heads}; consecutive pairs of q and k rotate (fp32 "
        "math, bf16 out). Text tokens: 256 (schnell's max_sequence_length) or 512; image tokens: "
        "(H/16) x (W/16) patches (latent H/8, 2x2 patches).",
        {"batch_size": (None, "images"), "txt_len": (None, "T5 tokens"), "height": (None, "patch rows (H/16)"),
         "width": (None, "patch columns (W/16)"), "seq_len": ("txt_len + height * width", "text + image tokens"),
         "num_heads": (heads, "num_heads"), "head_dim": (hd, "hidden_size / num_heads = sum(axes_dim)"),
         "three": (3, "id axes")},
        {"q": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
         "k": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
         "ids": (["batch_size", "seq_len", "three"], "float32", _IDS_INPUT)},
        {"q_out": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16"),
         "k_out": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16")},
        _body(_FLUX_ROPE), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 3), txt_len=(4, 8, 8, 16, 7, 4, 32, 8),
                                height=(2, 4, 4, 6, 5, 8, 8, 4), width=(2, 4, 6, 6, 7, 8, 12, 4)), subs=subs),
        "L1", ("rope_kv",), "rope_3axis", _flux_image_workloads())


def _flux_image_workloads():
    """(batch, text, rows, cols): 512-2048 px, the 1024 px native 64x64 grid, schnell's 256 and dev's 512 T5."""
    rows = ((1, 256, 32, 32), (1, 256, 48, 48), (1, 256, 64, 64), (1, 512, 64, 64), (2, 256, 64, 64),
            (1, 256, 48, 64), (1, 256, 64, 48), (1, 512, 68, 120), (4, 256, 64, 64), (2, 512, 64, 64),
            (1, 256, 96, 96), (1, 512, 96, 96), (4, 512, 64, 64), (1, 256, 128, 128), (2, 256, 96, 96),
            (2, 512, 128, 128))
    return [{"batch_size": b, "txt_len": t, "height": h, "width": w} for b, t, h, w in rows]


_FLUX_DOUBLE = _FLUX_ROPE_TABLE + '''

def _stream_qkv(x, mod, qkv_weight, qkv_bias, q_scale, k_scale, heads):
    """LayerNorm (no affine, eps 1e-6), (1 + scale) * x + shift, qkv, QKNorm (RMSNorm with scale, eps 1e-6)."""
    b, n, d = x.shape
    h = _layer_norm(x, None, None, 1e-06)
    h = ((1 + mod[:, 1, None]) * h + mod[:, 0, None]).to(x.dtype)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).view(b, n, 3, heads, -1).permute(2, 0, 3, 1, 4)
    return _rmsnorm(q, q_scale, 1e-06), _rmsnorm(k, k_scale, 1e-06), v


@torch.no_grad()
def run(img, txt, img_mod, txt_mod, img_qkv_weight, img_qkv_bias, img_q_scale, img_k_scale, img_proj_weight,
        img_proj_bias, txt_qkv_weight, txt_qkv_bias, txt_q_scale, txt_k_scale, txt_proj_weight, txt_proj_bias,
        pe_cos, pe_sin):
    """DoubleStreamBlock.forward up to the attention residuals; mod rows are (shift, scale, gate)."""
    heads = @HEADS@
    iq, ik, iv = _stream_qkv(img, img_mod, img_qkv_weight, img_qkv_bias, img_q_scale, img_k_scale, heads)
    tq, tk, tv = _stream_qkv(txt, txt_mod, txt_qkv_weight, txt_qkv_bias, txt_q_scale, txt_k_scale, heads)
    q, k, v = torch.cat((tq, iq), dim=2), torch.cat((tk, ik), dim=2), torch.cat((tv, iv), dim=2)
    q, k = _rope_pairs(q, pe_cos, pe_sin), _rope_pairs(k, pe_cos, pe_sin)
    o = _sdpa(q, k, v).transpose(1, 2).flatten(2)
    n_txt = txt.shape[1]
    txt_attn, img_attn = o[:, :n_txt], o[:, n_txt:]
    img_out = img + img_mod[:, 2, None] * F.linear(img_attn, img_proj_weight, img_proj_bias)
    txt_out = txt + txt_mod[:, 2, None] * F.linear(txt_attn, txt_proj_weight, txt_proj_bias)
    return img_out.to(img.dtype), txt_out.to(txt.dtype)
'''

_PE = "_flux_table(a, device, {!r})"
_QK_SCALE = "torch.rand(shape, device=device) * 1.5 + 0.25"
"""QKNorm scales spread over [0.25, 1.75] (trained ones vary per dim), so the softmax depends on them."""


def flux_double_stream(m) -> ProblemDraft:
    d, heads, axes_dim, theta = m.config["hidden_size"], m.config["num_heads"], m.config["axes_dim"], m.config["theta"]
    hd = d // heads
    s = d ** -0.5
    inputs = {"img": (["batch_size", "img_len", "hidden_size"], "bfloat16", 1.0),
              "txt": (["batch_size", "txt_len", "hidden_size"], "bfloat16", 1.0),
              "img_mod": (["batch_size", "three", "hidden_size"], "bfloat16", 0.3),
              "txt_mod": (["batch_size", "three", "hidden_size"], "bfloat16", 0.3)}
    for stream in ("img", "txt"):
        inputs.update({f"{stream}_qkv_weight": (["qkv_dim", "hidden_size"], "bfloat16", s),
                       f"{stream}_qkv_bias": (["qkv_dim"], "bfloat16", 0.1),
                       f"{stream}_q_scale": (["head_dim"], "bfloat16", 0.1, 1.0),
                       f"{stream}_k_scale": (["head_dim"], "bfloat16", 0.1, 1.0),
                       f"{stream}_proj_weight": (["hidden_size", "hidden_size"], "bfloat16", s),
                       f"{stream}_proj_bias": (["hidden_size"], "bfloat16", 0.1)})
    inputs["pe_cos"] = (["seq_len", "half_head"], "float32", _PE.format("cos"))
    inputs["pe_sin"] = (["seq_len", "half_head"], "float32", _PE.format("sin"))
    return _tiers(draft(
        m, f"{slug(m)}_double_stream_joint_attention_d{d}_h{heads}", "joint_attention",
        f"{m.name} double-stream block, attention half (BFL DoubleStreamBlock.forward): per stream (image, "
        f"text) LayerNorm (no affine, eps 1e-6) modulated by (1 + scale) and shift, fused qkv with bias "
        f"(qkv_bias), QKNorm (RMSNorm per head with learned scale); attention over [text, image] with 3-axis "
        f"RoPE (pe from EmbedND, axes_dim {axes_dim}, theta {theta}), {heads} heads of {hd}; split back, "
        "per-stream proj and gated residual x + gate * proj(attn). img_mod / txt_mod hold the (shift, scale, "
        "gate) rows of each stream's Modulation(vec) for this block (a GEMV done once per step). Image tokens: "
        "(H/16) x (W/16); text: 256 or 512 T5 tokens.",
        {"batch_size": (None, "images"), "txt_len": (None, "T5 tokens"), "height": (None, "patch rows (H/16)"),
         "width": (None, "patch columns (W/16)"), "img_len": ("height * width", "image tokens"),
         "seq_len": ("txt_len + height * width", "joint tokens"), "hidden_size": (d, "hidden_size"),
         "qkv_dim": (3 * d, "3 x hidden_size"), "head_dim": (hd, "hidden_size / num_heads"),
         "half_head": (hd // 2, "rotated pairs per head"), "three": (3, "shift, scale, gate")},
        inputs,
        {"img_out": (["batch_size", "img_len", "hidden_size"], "bfloat16"),
         "txt_out": (["batch_size", "txt_len", "hidden_size"], "bfloat16")},
        _body(_FLUX_DOUBLE), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), txt_len=(4, 8, 8, 16, 7, 4, 24, 8),
                                  height=(2, 4, 4, 4, 5, 4, 6, 8), width=(2, 4, 4, 6, 5, 6, 6, 8)),
        subs={"AXES": axes_dim, "THETA": float(theta), "HEADS": heads}),
        "L2", ("attention", "rope_kv"), "flux_double_stream", _flux_image_workloads())


_FLUX_SINGLE = _FLUX_ROPE_TABLE + '''

@torch.no_grad()
def run(x, mod, linear1_weight, linear1_bias, q_scale, k_scale, linear2_weight, linear2_bias, pe_cos, pe_sin):
    """SingleStreamBlock.forward: x_mod = (1 + scale) * LN(x) + shift; qkv | mlp = linear1(x_mod); QKNorm;
    RoPE; attention; out = linear2(cat(attn, gelu_tanh(mlp))); x + gate * out."""
    b, n, d = x.shape
    heads = @HEADS@
    h = _layer_norm(x, None, None, 1e-06)
    h = ((1 + mod[:, 1, None]) * h + mod[:, 0, None]).to(x.dtype)
    qkv, mlp = F.linear(h, linear1_weight, linear1_bias).split([3 * d, linear1_weight.shape[0] - 3 * d], dim=-1)
    q, k, v = qkv.reshape(b, n, 3, heads, -1).permute(2, 0, 3, 1, 4)
    q, k = _rmsnorm(q, q_scale, 1e-06), _rmsnorm(k, k_scale, 1e-06)
    q, k = _rope_pairs(q, pe_cos, pe_sin), _rope_pairs(k, pe_cos, pe_sin)
    attn = _sdpa(q, k, v).transpose(1, 2).flatten(2)
    out = F.linear(torch.cat((attn, F.gelu(mlp, approximate="tanh")), dim=2), linear2_weight, linear2_bias)
    return (x + mod[:, 2, None] * out).to(x.dtype)
'''


def flux_single_stream(m) -> ProblemDraft:
    d, heads, ratio = m.config["hidden_size"], m.config["num_heads"], m.config["mlp_ratio"]
    hd, mlp = d // heads, int(d * ratio)
    return _tiers(draft(
        m, f"{slug(m)}_single_stream_block_d{d}_h{heads}", "dit_block",
        f"{m.name} single-stream (parallel) block, BFL SingleStreamBlock.forward: LayerNorm (no affine, eps 1e-6) "
        f"modulated by the block's (shift, scale, gate) rows (mod, from Modulation(vec)); linear1 {d} -> 3x{d} qkv "
        f"+ {mlp} MLP (mlp_ratio {ratio}) in one GEMM; QKNorm (RMSNorm with scale, eps 1e-6), 3-axis RoPE (pe as "
        f"EmbedND gives it), attention over the joint [text, image] sequence ({heads} heads of {hd}); linear2 "
        f"over cat(attention, GELU-tanh(mlp)) ({d + mlp} -> {d}); gated residual.",
        {"batch_size": (None, "images"), "txt_len": (None, "T5 tokens"), "height": (None, "patch rows (H/16)"),
         "width": (None, "patch columns (W/16)"), "seq_len": ("txt_len + height * width", "joint tokens"),
         "hidden_size": (d, "hidden_size"), "linear1_dim": (3 * d + mlp, "3 x hidden + hidden x mlp_ratio"),
         "linear2_dim": (d + mlp, "hidden + hidden x mlp_ratio"), "head_dim": (hd, "hidden_size / num_heads"),
         "half_head": (hd // 2, "rotated pairs per head"), "three": (3, "shift, scale, gate")},
        {"x": (["batch_size", "seq_len", "hidden_size"], "bfloat16", 1.0),
         "mod": (["batch_size", "three", "hidden_size"], "bfloat16", 0.3),
         "linear1_weight": (["linear1_dim", "hidden_size"], "bfloat16", d ** -0.5),
         "linear1_bias": (["linear1_dim"], "bfloat16", 0.1),
         "q_scale": (["head_dim"], "bfloat16", _QK_SCALE), "k_scale": (["head_dim"], "bfloat16", _QK_SCALE),
         "linear2_weight": (["hidden_size", "linear2_dim"], "bfloat16", (d + mlp) ** -0.5),
         "linear2_bias": (["hidden_size"], "bfloat16", 0.1),
         "pe_cos": (["seq_len", "half_head"], "float32", _PE.format("cos")),
         "pe_sin": (["seq_len", "half_head"], "float32", _PE.format("sin"))},
        {"output": (["batch_size", "seq_len", "hidden_size"], "bfloat16")},
        _body(_FLUX_SINGLE), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), txt_len=(4, 8, 8, 16, 7, 4, 24, 8),
                                  height=(2, 4, 4, 4, 5, 4, 6, 8), width=(2, 4, 4, 6, 5, 6, 6, 8)),
        subs={"AXES": m.config["axes_dim"], "THETA": float(m.config["theta"]), "HEADS": heads}),
        "L2", ("attention", "rope_kv"), "flux_single_stream", _flux_image_workloads())


# ================================ Hunyuan-DiT ===========================================================

_HUNYUAN_ROPE = '''def _hunyuan_table(a, device, which):
    """get_2d_rotary_pos_embed (use_real) on the grid get_fill_resize_and_crop gives for base size 32 (512 px /
    8 / 2): positions are linspace over the crop of the base grid; the first half of head_dim rotates by the
    column position, the second by the row (the meshgrid order of the original), pairs repeated interleaved."""
    h, w, head_dim = a["height"], a["width"], @HEAD_DIM@
    base = 32
    if h > w:
        rh, rw = base, int(round(base / h * w))
    else:
        rw, rh = base, int(round(base / w * h))
    top, left = int(round((base - rh) / 2.0)), int(round((base - rw) / 2.0))
    rows = top + torch.arange(h, dtype=torch.float64, device=device) * (rh / h)
    cols = left + torch.arange(w, dtype=torch.float64, device=device) * (rw / w)
    quarter = head_dim // 4
    freqs = 1.0 / (10000 ** (torch.arange(0, head_dim // 2, 2, dtype=torch.float64, device=device)[:quarter]
                             / (head_dim // 2)))
    col_angle = cols[None, :, None].expand(h, w, 1) * freqs
    row_angle = rows[:, None, None].expand(h, w, 1) * freqs
    angle = torch.cat((col_angle, row_angle), dim=-1).reshape(h * w, -1).float()
    return angle.cos() if which == "cos" else angle.sin()
'''

_HUNYUAN_SKIP_ATTN = _HUNYUAN_ROPE + '''

@torch.no_grad()
def run(x, skip, c, skip_norm_weight, skip_norm_bias, skip_linear_weight, skip_linear_bias, mod_weight, mod_bias,
        norm1_weight, norm1_bias, qkv_weight, qkv_bias, q_norm_weight, q_norm_bias, k_norm_weight, k_norm_bias,
        out_weight, out_bias, rope_cos, rope_sin):
    """HunYuanDiTBlock.forward through the self-attention residual, for a block of the second half (skip=True)."""
    b, n, d = x.shape
    heads = @HEADS@
    x = F.linear(_layer_norm(torch.cat((x, skip), dim=-1), skip_norm_weight, skip_norm_bias, 1e-06),
                 skip_linear_weight, skip_linear_bias)
    shift = F.linear(F.silu(c), mod_weight, mod_bias)[:, None]
    h = (_layer_norm(x, norm1_weight, norm1_bias, 1e-06) + shift).to(x.dtype)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).view(b, n, 3, heads, -1).permute(2, 0, 3, 1, 4)
    q = _layer_norm(q, q_norm_weight, q_norm_bias, 1e-06)
    k = _layer_norm(k, k_norm_weight, k_norm_bias, 1e-06)
    q, k = _rope_pairs(q, rope_cos, rope_sin), _rope_pairs(k, rope_cos, rope_sin)
    o = _sdpa(q, k, v).transpose(1, 2).reshape(b, n, d)
    return (x + F.linear(o, out_weight, out_bias)).to(x.dtype)
'''

_HY_TABLE = "_hunyuan_table(a, device, {!r})"


def _hunyuan_workloads():
    """(batch, rows, cols): the supported 768-1280 px sizes at 1/16 (latent /8, patch 2), batch x2 for CFG."""
    rows = ((2, 64, 64), (1, 64, 64), (2, 48, 48), (2, 64, 48), (2, 48, 64), (2, 72, 54), (2, 54, 72),
            (2, 80, 60), (2, 60, 80), (2, 80, 48), (2, 48, 80), (2, 80, 80), (4, 64, 64), (4, 80, 80),
            (8, 64, 64), (16, 80, 80))
    return [{"batch_size": b, "height": h, "width": w} for b, h, w in rows]


def _hunyuan_cpu():
    return grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), height=(2, 4, 4, 6, 4, 4, 8, 6), width=(2, 4, 4, 6, 6, 3, 8, 8))


def hunyuan_skip_self_attention(m) -> ProblemDraft:
    d, heads = m.config["hidden_size"], m.config["num_heads"]
    hd = d // heads
    s = d ** -0.5
    return _tiers(draft(
        m, f"{slug(m)}_long_skip_self_attention_d{d}_h{heads}", "dit_block",
        f"{m.name} block of the second half (HunYuanDiTBlock.forward with skip=True, hydit/modules/models.py): "
        f"long skip connection x = skip_linear(skip_norm(cat(x, skip))) (LayerNorm over 2x{d}, eps 1e-6, then "
        f"Linear {2 * d} -> {d}); shift-only modulation shift = Linear(SiLU(c)) (c_emb_size = hidden_size {d}); "
        f"self-attention on norm1(x) + shift: qkv with bias, per-head LayerNorm on q and k (qk_norm, "
        f"norm 'layer', eps 1e-6), 2-D RoPE on q and k (get_2d_rotary_pos_embed tables as inputs), {heads} heads "
        f"of {hd}; out_proj, residual. Image tokens (H/16) x (W/16); batch x2 for classifier-free guidance.",
        {"batch_size": (None, "images (x2 with CFG)"), "height": (None, "patch rows"), "width": (None, "patch columns"),
         "num_tokens": ("height * width", "image tokens"), "hidden_size": (d, "hidden_size"),
         "two_hidden": (2 * d, "cat(x, skip)"), "qkv_dim": (3 * d, "3 x hidden_size"),
         "head_dim": (hd, "hidden_size / num_heads"), "half_head": (hd // 2, "rotated pairs per head")},
        {"x": (["batch_size", "num_tokens", "hidden_size"], "bfloat16", 1.0),
         "skip": (["batch_size", "num_tokens", "hidden_size"], "bfloat16", 1.0),
         "c": (["batch_size", "hidden_size"], "bfloat16", 1.0),
         "skip_norm_weight": (["two_hidden"], "bfloat16", 0.1, 1.0), "skip_norm_bias": (["two_hidden"], "bfloat16", 0.1),
         "skip_linear_weight": (["hidden_size", "two_hidden"], "bfloat16", (2 * d) ** -0.5),
         "skip_linear_bias": (["hidden_size"], "bfloat16", 0.1),
         "mod_weight": (["hidden_size", "hidden_size"], "bfloat16", s), "mod_bias": (["hidden_size"], "bfloat16", 0.1),
         "norm1_weight": (["hidden_size"], "bfloat16", 0.1, 1.0), "norm1_bias": (["hidden_size"], "bfloat16", 0.1),
         "qkv_weight": (["qkv_dim", "hidden_size"], "bfloat16", s), "qkv_bias": (["qkv_dim"], "bfloat16", 0.1),
         "q_norm_weight": (["head_dim"], "bfloat16", 0.1, 1.0), "q_norm_bias": (["head_dim"], "bfloat16", 0.1),
         "k_norm_weight": (["head_dim"], "bfloat16", 0.1, 1.0), "k_norm_bias": (["head_dim"], "bfloat16", 0.1),
         "out_weight": (["hidden_size", "hidden_size"], "bfloat16", s), "out_bias": (["hidden_size"], "bfloat16", 0.1),
         "rope_cos": (["num_tokens", "half_head"], "float32", _HY_TABLE.format("cos")),
         "rope_sin": (["num_tokens", "half_head"], "float32", _HY_TABLE.format("sin"))},
        {"output": (["batch_size", "num_tokens", "hidden_size"], "bfloat16")},
        _body(_HUNYUAN_SKIP_ATTN), _hunyuan_cpu(), subs={"HEADS": heads, "HEAD_DIM": hd}),
        "L2", ("attention", "rope_kv"), "hunyuan_skip_attention", _hunyuan_workloads())


_HUNYUAN_CROSS = _HUNYUAN_ROPE + '''

@torch.no_grad()
def run(x, text_states, norm3_weight, norm3_bias, q_weight, q_bias, kv_weight, kv_bias, q_norm_weight, q_norm_bias,
        k_norm_weight, out_weight, out_bias, rope_cos, rope_sin):
    """x + CrossAttention(norm3(x), text_states) with q/k LayerNorm and RoPE on q only (attn_layers.py)."""
    b, n, d = x.shape
    heads = @HEADS@
    h = _layer_norm(x, norm3_weight, norm3_bias, 1e-06)
    q = F.linear(h, q_weight, q_bias).view(b, n, heads, -1).transpose(1, 2)
    k, v = F.linear(text_states, kv_weight, kv_bias).view(b, text_states.shape[1], 2, heads, -1).permute(2, 0, 3, 1, 4)
    q = _rope_pairs(_layer_norm(q, q_norm_weight, q_norm_bias, 1e-06), rope_cos, rope_sin)
    k = _layer_norm(k, k_norm_weight, None, 1e-06)  # k_norm's bias adds q . b to every logit of a row: cancels
    o = _sdpa(q, k, v).transpose(1, 2).reshape(b, n, d)
    return (x + F.linear(o, out_weight, out_bias)).to(x.dtype)
'''


def hunyuan_cross_attention(m) -> ProblemDraft:
    d, heads, text_dim = m.config["hidden_size"], m.config["num_heads"], m.config["text_states_dim"]
    clip, t5 = m.config["text_len"], m.config["text_len_t5"]
    hd = d // heads
    s = d ** -0.5
    return _tiers(draft(
        m, f"{slug(m)}_clip_mt5_cross_attention_d{d}_h{heads}", "cross_attention",
        f"{m.name} cross-attention step of HunYuanDiTBlock: x + attn2(norm3(x), text_states) where text_states are "
        f"text_len {clip} CLIP tokens and text_len_t5 {t5} mT5 tokens (after mlp_t5), {clip + t5} tokens of "
        f"text_states_dim {text_dim}, padded positions replaced by the learned padding embedding upstream (no "
        f"mask). norm3 LayerNorm with affine (eps 1e-6); q = Linear({d}), kv = Linear({text_dim} -> 2x{d}), both "
        f"with bias; per-head LayerNorm on q and k (qk_norm; k_norm's bias is left out: it adds q . b to every "
        f"logit of a row, which the softmax cancels), 2-D RoPE on q only (the original's "
        f"apply_rotary_emb(q, None, ...)); {heads} heads of {hd}; out_proj with bias; residual.",
        {"batch_size": (None, "images (x2 with CFG)"), "height": (None, "patch rows"), "width": (None, "patch columns"),
         "num_tokens": ("height * width", "image tokens"), "text_tokens": (clip + t5, "text_len + text_len_t5"),
         "hidden_size": (d, "hidden_size"), "text_dim": (text_dim, "text_states_dim"),
         "kv_dim": (2 * d, "2 x hidden_size"), "head_dim": (hd, "hidden_size / num_heads"),
         "half_head": (hd // 2, "rotated pairs per head")},
        {"x": (["batch_size", "num_tokens", "hidden_size"], "bfloat16", 1.0),
         "text_states": (["batch_size", "text_tokens", "text_dim"], "bfloat16", 1.0),
         "norm3_weight": (["hidden_size"], "bfloat16", 0.1, 1.0), "norm3_bias": (["hidden_size"], "bfloat16", 0.1),
         "q_weight": (["hidden_size", "hidden_size"], "bfloat16", s), "q_bias": (["hidden_size"], "bfloat16", 0.1),
         "kv_weight": (["kv_dim", "text_dim"], "bfloat16", text_dim ** -0.5), "kv_bias": (["kv_dim"], "bfloat16", 0.1),
         "q_norm_weight": (["head_dim"], "bfloat16", 0.1, 1.0), "q_norm_bias": (["head_dim"], "bfloat16", 0.1),
         "k_norm_weight": (["head_dim"], "bfloat16", 0.1, 1.0),
         "out_weight": (["hidden_size", "hidden_size"], "bfloat16", s), "out_bias": (["hidden_size"], "bfloat16", 0.1),
         "rope_cos": (["num_tokens", "half_head"], "float32", _HY_TABLE.format("cos")),
         "rope_sin": (["num_tokens", "half_head"], "float32", _HY_TABLE.format("sin"))},
        {"output": (["batch_size", "num_tokens", "hidden_size"], "bfloat16")},
        _body(_HUNYUAN_CROSS), _hunyuan_cpu(), subs={"HEADS": heads, "HEAD_DIM": hd}),
        "L2", ("attention", "rope_kv"), "hunyuan_cross_attention", _hunyuan_workloads())


# ================================ Sana 1600M ============================================================

_SANA_LINEAR_ATTN = '''@torch.no_grad()
def run(x, t, scale_shift_table, qkv_weight, proj_weight, proj_bias):
    """x + gate_msa * LiteLA(t2i_modulate(norm1(x), shift_msa, scale_msa)) (SanaMSBlock.forward, first residual)."""
    b, hh, ww, d = x.shape
    heads = @HEADS@
    acc = _acc(x)
    mod = scale_shift_table[None] + t.view(b, 6, d)  # shift/scale/gate msa, shift/scale/gate mlp
    h = _layer_norm(x, None, None, 1e-06).reshape(b, hh * ww, d)
    h = (h * (1 + mod[:, 1:2]) + mod[:, 0:1]).to(x.dtype)
    q, k, v = F.linear(h, qkv_weight).view(b, hh * ww, 3, heads, -1).permute(2, 0, 3, 1, 4)
    q, k, v = F.relu(q).to(acc), F.relu(k).to(acc), v.to(acc)
    kv = torch.matmul(k.transpose(-1, -2), v)                      # [b, heads, d_k, d_v]
    num = torch.matmul(q, kv)                                       # [b, heads, n, d_v]
    den = torch.matmul(q, k.sum(dim=2, keepdim=True).transpose(-1, -2))  # [b, heads, n, 1]
    o = (num / (den + 1e-15)).to(x.dtype).transpose(1, 2).reshape(b, hh * ww, d)
    out = x.reshape(b, hh * ww, d) + mod[:, 2:3] * F.linear(o, proj_weight, proj_bias)
    return out.view(b, hh, ww, d).to(x.dtype)
'''


def _sana_workloads():
    """(batch, rows, cols) of the 32x-downsampled DC-AE latent (patch 1): 1024 px = 32x32 tokens and the
    multi-scale 1024-px aspect buckets; batches of 1-32 prompts x2 for classifier-free guidance."""
    rows = ((2, 32, 32), (1, 32, 32), (2, 28, 36), (2, 36, 28), (2, 24, 42), (2, 42, 24), (4, 32, 32),
            (8, 32, 32), (8, 28, 36), (16, 32, 32), (16, 24, 42), (32, 32, 32), (32, 36, 28), (48, 32, 32),
            (64, 32, 32), (64, 42, 24))
    return [{"batch_size": b, "height": h, "width": w} for b, h, w in rows]


def _sana_cpu():
    return grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 3), height=(2, 4, 4, 6, 4, 3, 8, 4), width=(2, 4, 4, 6, 7, 5, 8, 4))


def _sana_axes(m, extra):
    d = m.config["hidden_size"]
    axes = {"batch_size": (None, "images (x2 with CFG)"), "height": (None, "latent rows (H / 32)"),
            "width": (None, "latent columns (W / 32)"), "hidden_size": (d, "hidden_size"),
            "six_hidden": (6 * d, "6 x hidden_size (adaLN-single t)"), "six": (6, "shift/scale/gate x 2")}
    axes.update(extra)
    return axes


def sana_linear_attention(m) -> ProblemDraft:
    d = m.config["hidden_size"]
    head_dim = 32
    heads = d // head_dim
    return _tiers(draft(
        m, f"{slug(m)}_relu_linear_attention_block_d{d}_h{heads}", "linear_attention",
        f"{m.name} self-attention residual of SanaMSBlock (attn_type {m.config['attn_type']}): adaLN-single "
        f"modulation (scale_shift_table [6, {d}] + the shared t [B, 6x{d}]), LayerNorm (no affine, eps 1e-6), "
        f"t2i_modulate; LiteLA: qkv Linear without bias, {heads} heads of {head_dim} (linear_head_dim 32 of "
        "SanaMSBlock: hidden_size / 32 heads; num_heads 20 is the cross-attention's), ReLU kernel on q and k, "
        "linear attention in fp32 out = (relu(q) (relu(k)^T v)) / (relu(q) . sum relu(k) + 1e-15) (diffusers "
        "SanaLinearAttnProcessor2_0: v padded with a row of ones), proj with bias; gated residual. No positional "
        f"embedding (use_pe {m.config['use_pe']}); tokens = the 32x-downsampled latent (patch_size 1).",
        _sana_axes(m, {"qkv_dim": (3 * d, "3 x hidden_size")}),
        {"x": (["batch_size", "height", "width", "hidden_size"], "bfloat16", 1.0),
         "t": (["batch_size", "six_hidden"], "bfloat16", 0.3),
         "scale_shift_table": (["six", "hidden_size"], "bfloat16", d ** -0.5),
         "qkv_weight": (["qkv_dim", "hidden_size"], "bfloat16", d ** -0.5),
         "proj_weight": (["hidden_size", "hidden_size"], "bfloat16", d ** -0.5),
         "proj_bias": (["hidden_size"], "bfloat16", 0.1)},
        {"output": (["batch_size", "height", "width", "hidden_size"], "bfloat16")},
        _body(_SANA_LINEAR_ATTN), _sana_cpu(), subs={"HEADS": heads}),
        "L2", ("attention",), "sana_linear_attention", _sana_workloads())


_SANA_GLUMBCONV = '''@torch.no_grad()
def run(x, t, scale_shift_table, inverted_weight, inverted_bias, depth_weight, depth_bias, point_weight):
    """x + gate_mlp * GLUMBConv(t2i_modulate(norm2(x), shift_mlp, scale_mlp)) (SanaMSBlock.forward, last residual)."""
    b, hh, ww, d = x.shape
    mod = scale_shift_table[None] + t.view(b, 6, d)
    h = _layer_norm(x, None, None, 1e-06)
    h = (h * (1 + mod[:, 4, None, None]) + mod[:, 3, None, None]).to(x.dtype).permute(0, 3, 1, 2)
    h = F.silu(F.conv2d(h, inverted_weight, inverted_bias))                       # 1x1, act silu
    h = F.conv2d(h, depth_weight, depth_bias, padding=1, groups=h.shape[1])      # 3x3 depthwise, no act
    h, gate = h.chunk(2, dim=1)
    h = F.conv2d(h * F.silu(gate), point_weight)                                 # 1x1, no bias, no act
    return (x + mod[:, 5, None, None] * h.permute(0, 2, 3, 1)).to(x.dtype)
'''


def sana_glumbconv(m) -> ProblemDraft:
    d, ratio = m.config["hidden_size"], m.config["mlp_ratio"]
    hidden = int(d * ratio)
    return _tiers(draft(
        m, f"{slug(m)}_glumbconv_mix_ffn_d{d}_i{hidden}", "mix_ffn",
        f"{m.name} Mix-FFN residual of SanaMSBlock (ffn_type {m.config['ffn_type']}): LayerNorm (no affine, eps "
        f"1e-6) + t2i_modulate with the MLP shift/scale of the adaLN-single modulation, then GLUMBConv "
        f"(mlp_ratio {ratio}, hidden {hidden}, mlp_acts {m.config['mlp_acts']}): 1x1 conv {d} -> 2x{hidden} with "
        f"bias + SiLU, 3x3 depthwise conv with bias over the token grid, split into x and gate, x * SiLU(gate), "
        f"1x1 conv {hidden} -> {d} without bias; gated residual. Tokens are the (H/32) x (W/32) latent grid.",
        _sana_axes(m, {"two_hidden": (2 * hidden, "2 x int(hidden_size x mlp_ratio)"),
                       "mlp_hidden": (hidden, "int(hidden_size x mlp_ratio)"), "one": (1, "1x1 kernel"),
                       "three": (3, "3x3 kernel")}),
        # a trained table and t of unit scale (the init's 1/sqrt(hidden) table would drown in bf16 rounding of x)
        {"x": (["batch_size", "height", "width", "hidden_size"], "bfloat16", 1.0),
         "t": (["batch_size", "six_hidden"], "bfloat16", 1.0),
         "scale_shift_table": (["six", "hidden_size"], "bfloat16", 0.5),
         "inverted_weight": (["two_hidden", "hidden_size", "one", "one"], "bfloat16", d ** -0.5),
         "inverted_bias": (["two_hidden"], "bfloat16", 0.5),
         "depth_weight": (["two_hidden", "one", "three", "three"], "bfloat16", 1.0 / 3),
         "depth_bias": (["two_hidden"], "bfloat16", 0.1),
         "point_weight": (["hidden_size", "mlp_hidden", "one", "one"], "bfloat16", hidden ** -0.5)},
        {"output": (["batch_size", "height", "width", "hidden_size"], "bfloat16")},
        _body(_SANA_GLUMBCONV), _sana_cpu()),
        "L2", (), "glumbconv", _sana_workloads())


_SANA_LA_BWD = '''def run(q, k, v, grad_output):
    """Gradients of Sana's ReLU linear attention out = relu(q)(relu(k)^T v) / (relu(q) . sum relu(k) + 1e-15)."""
    acc = _acc(q)
    with torch.enable_grad():
        qq, kk, vv = (z.detach().to(acc).requires_grad_() for z in (q, k, v))
        rq, rk = F.relu(qq), F.relu(kk)
        num = torch.matmul(rq, torch.matmul(rk.transpose(-1, -2), vv))
        den = torch.matmul(rq, rk.sum(dim=2, keepdim=True).transpose(-1, -2))
        out = num / (den + 1e-15)
        grads = torch.autograd.grad(out, (qq, kk, vv), grad_output.to(acc))
    return tuple(g.to(q.dtype) for g in grads)
'''


def sana_linear_attention_backward(m) -> ProblemDraft:
    d = m.config["hidden_size"]
    head_dim, heads = 32, d // 32
    spec = (["batch_size", "num_heads", "num_tokens", "head_dim"], "bfloat16", 1.0)
    gpu = [{"batch_size": b, "num_tokens": n} for b, n in
           ((1, 1024), (2, 1024), (4, 1024), (8, 1024), (2, 1008), (2, 972), (16, 1024), (8, 1008),
            (32, 1024), (1, 4096), (2, 4096), (64, 1024), (4, 4096), (8, 4096), (1, 16384), (2, 16384))]
    return _tiers(draft(
        m, f"{slug(m)}_relu_linear_attention_backward_h{heads}_d{head_dim}", "linear_attention_backward",
        f"Backward of {m.name}'s ReLU linear attention core (LiteLA.attn_matmul / SanaLinearAttnProcessor2_0), as "
        f"in training: given q, k, v before the ReLU kernel ({heads} heads of {head_dim}: hidden_size {d} / "
        "linear_head_dim 32) and grad_output, the gradients of q, k and v of out = relu(q)(relu(k)^T v) / "
        "(relu(q) . sum_n relu(k_n) + 1e-15), computed in fp32 (the fp32 path Sana uses against NaN losses), "
        "bf16 in and out. Tokens: 1024 per 1024-px image (32x32 latent), 4096 at 2048 px, 16384 at 4096 px.",
        {"batch_size": (None, "images"), "num_heads": (heads, "hidden_size / 32"),
         "num_tokens": (None, "latent tokens"), "head_dim": (head_dim, "linear_head_dim")},
        {"q": spec, "k": spec, "v": spec, "grad_output": spec},
        {"grad_q": tuple(spec[:2]), "grad_k": tuple(spec[:2]), "grad_v": tuple(spec[:2])},
        _body(_SANA_LA_BWD), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 3), num_tokens=(16, 64, 64, 100, 144, 36, 256, 49)),
        backward=True),
        "L1", ("attention",), "linear_attention_backward", gpu)


# ================================ SDXL / SD 2.1 UNet =====================================================

_SPATIAL_TRANSFORMER = '''@torch.no_grad()
def run(x, context, norm_weight, norm_bias, proj_in_weight, proj_in_bias, norm1_weight, norm1_bias, attn1_qkv_weight,
        attn1_out_weight, attn1_out_bias, norm2_weight, norm2_bias, attn2_q_weight, attn2_kv_weight, attn2_out_weight,
        attn2_out_bias, norm3_weight, norm3_bias, ff_proj_weight, ff_proj_bias, ff_out_weight, ff_out_bias,
        proj_out_weight, proj_out_bias):
    """sgm SpatialTransformer (use_linear) with transformer_depth BasicTransformerBlocks: GroupNorm(32, eps 1e-6),
    proj_in, [x + attn1(norm1 x); x + attn2(norm2 x, context); x + GEGLU FF(norm3 x)] per block, proj_out, + x."""
    b, c, hh, ww = x.shape
    heads = c // @HEAD_CH@
    acc, lowp = _acc(x), proj_in_weight.dtype  # the residual stream in fp32, GEMM and attention inputs in bf16
    h = F.group_norm(x.to(acc), 32, norm_weight.to(acc), norm_bias.to(acc), 1e-06).to(lowp)
    h = F.linear(h.flatten(2).transpose(1, 2), proj_in_weight, proj_in_bias).to(acc)
    n = h.shape[1]

    def heads_of(z):
        return z.view(b, -1, heads, @HEAD_CH@).transpose(1, 2)

    def attend(q, k, v):
        return _sdpa(heads_of(q), heads_of(k), heads_of(v)).transpose(1, 2).reshape(b, n, c)

    def norm(z, weight, bias):
        return _layer_norm(z, weight, bias, 1e-05).to(lowp)

    for i in range(attn1_qkv_weight.shape[0]):
        q, k, v = F.linear(norm(h, norm1_weight[i], norm1_bias[i]), attn1_qkv_weight[i]).chunk(3, dim=-1)
        h = h + F.linear(attend(q, k, v), attn1_out_weight[i], attn1_out_bias[i]).to(acc)
        k, v = F.linear(context, attn2_kv_weight[i]).chunk(2, dim=-1)
        q = F.linear(norm(h, norm2_weight[i], norm2_bias[i]), attn2_q_weight[i])
        h = h + F.linear(attend(q, k, v), attn2_out_weight[i], attn2_out_bias[i]).to(acc)
        p, gate = F.linear(norm(h, norm3_weight[i], norm3_bias[i]), ff_proj_weight[i], ff_proj_bias[i]).chunk(2, dim=-1)
        h = h + F.linear(p * F.gelu(gate), ff_out_weight[i], ff_out_bias[i]).to(acc)
    h = F.linear(h.to(lowp), proj_out_weight, proj_out_bias).transpose(1, 2).reshape(b, c, hh, ww)
    return (h.to(acc) + x.to(acc)).to(x.dtype)
'''


def spatial_transformer(m, level: int, depth: int, name: str, where: str, gpu, cpu) -> ProblemDraft:
    c = m.config["model_channels"] * m.config["channel_mult"][level]
    head_ch, ctx = m.config["num_head_channels"], m.config["context_dim"]
    s = c ** -0.5

    def per(*shape, std, mean=0.0):
        return (["depth", *shape], "bfloat16", std, mean) if mean else (["depth", *shape], "bfloat16", std)
    inputs = {"x": (["batch_size", "channels", "height", "width"], "bfloat16", 1.0),
              "context": (["batch_size", "context_len", "context_dim"], "bfloat16", 1.0),
              "norm_weight": (["channels"], "bfloat16", 0.1, 1.0), "norm_bias": (["channels"], "bfloat16", 0.1),
              "proj_in_weight": (["channels", "channels"], "bfloat16", s), "proj_in_bias": (["channels"], "bfloat16", 0.1),
              "norm1_weight": per("channels", std=0.1, mean=1.0), "norm1_bias": per("channels", std=0.1),
              "attn1_qkv_weight": per("three_channels", "channels", std=s),
              "attn1_out_weight": per("channels", "channels", std=s), "attn1_out_bias": per("channels", std=0.1),
              "norm2_weight": per("channels", std=0.1, mean=1.0), "norm2_bias": per("channels", std=0.1),
              "attn2_q_weight": per("channels", "channels", std=s),
              "attn2_kv_weight": per("two_channels", "context_dim", std=ctx ** -0.5),
              "attn2_out_weight": per("channels", "channels", std=s), "attn2_out_bias": per("channels", std=0.1),
              "norm3_weight": per("channels", std=0.1, mean=1.0), "norm3_bias": per("channels", std=0.1),
              "ff_proj_weight": per("eight_channels", "channels", std=s), "ff_proj_bias": per("eight_channels", std=0.1),
              "ff_out_weight": per("channels", "four_channels", std=(4 * c) ** -0.5),
              "ff_out_bias": per("channels", std=0.1),
              "proj_out_weight": (["channels", "channels"], "bfloat16", s),
              "proj_out_bias": (["channels"], "bfloat16", 0.1)}
    return _tiers(draft(
        m, name, "spatial_transformer",
        f"{m.name} SpatialTransformer at {where} (sgm modules/attention.py, use_linear_in_transformer): GroupNorm "
        f"(32 groups, eps 1e-6), proj_in Linear, transformer_depth {depth} BasicTransformerBlock(s) of {c} channels "
        f"({c // head_ch} heads of num_head_channels {head_ch}): LayerNorm + self-attention (to_q/k/v without "
        f"bias, to_out with bias), LayerNorm + cross-attention to the text context (context_dim {ctx}, 77 "
        "tokens), LayerNorm + GEGLU feed-forward (Linear to 2 x 4C, x * GELU(gate), Linear back); proj_out, "
        "residual to the block input (the residual stream kept in fp32 between the bf16 GEMMs). Weights of the "
        "blocks stacked on a leading depth axis; q/k/v of the "
        "self-attention stacked as [to_q; to_k; to_v]. Batch x2 for classifier-free guidance.",
        {"batch_size": (None, "latents (x2 with CFG)"), "channels": (c, f"model_channels x channel_mult[{level}]"),
         "height": (None, "feature rows"), "width": (None, "feature columns"),
         "context_len": (77, "CLIP tokens"), "context_dim": (ctx, "context_dim"), "depth": (depth, "transformer_depth"),
         "two_channels": (2 * c, "k and v"), "three_channels": (3 * c, "q, k and v"),
         "four_channels": (4 * c, "GEGLU inner dim"), "eight_channels": (8 * c, "GEGLU proj (value and gate)")},
        inputs, {"output": (["batch_size", "channels", "height", "width"], "bfloat16")},
        _body(_SPATIAL_TRANSFORMER), cpu, subs={"HEAD_CH": head_ch}),
        "L2", ("attention",), "spatial_transformer", gpu)


def _unet_grid(rows):
    return [{"batch_size": b, "height": h, "width": w} for b, h, w in rows]


def sdxl_spatial_transformer(m) -> ProblemDraft:
    # level 1 (attention_resolutions [4, 2] -> ds 2 and 4): 640 channels, transformer_depth[1] = 2, 1/16 of the image
    gpu = _unet_grid(((2, 64, 64), (1, 64, 64), (2, 56, 72), (2, 72, 56), (2, 52, 76), (2, 76, 52), (2, 48, 84),
                      (2, 84, 48), (2, 40, 96), (2, 96, 40), (4, 64, 64), (4, 56, 72), (8, 64, 64), (8, 48, 84),
                      (16, 64, 64), (16, 52, 76)))
    cpu = grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), height=(2, 4, 4, 6, 4, 3, 8, 5), width=(2, 4, 4, 6, 7, 5, 8, 6))
    return spatial_transformer(m, 1, m.config["transformer_depth"][1], f"{slug(m)}_spatial_transformer_c640_depth2",
                               "the 640-channel level (input_blocks 4-5 / output_blocks 3-5: 64x64 at 1024 px)", gpu, cpu)


def sd21_spatial_transformer(m) -> ProblemDraft:
    # level 0 (attention_resolutions [4, 2, 1] includes ds 1): 320 channels at the latent resolution, depth 1
    gpu = _unet_grid(((2, 96, 96), (1, 96, 96), (2, 64, 64), (2, 96, 128), (2, 128, 96), (2, 80, 112),
                      (2, 112, 80), (4, 96, 96), (4, 64, 64), (2, 128, 128), (8, 64, 64), (8, 96, 96), (4, 128, 96),
                      (16, 64, 64), (4, 128, 128), (16, 96, 96)))
    cpu = grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), height=(2, 4, 4, 6, 4, 3, 8, 10), width=(2, 4, 4, 6, 7, 5, 8, 10))
    return spatial_transformer(m, 0, m.config["transformer_depth"], f"{slug(m)}_spatial_transformer_c320",
                               "the full-latent-resolution level (input_blocks 1-2 / output_blocks 9-11: 96x96 "
                               "at 768 px, 9216 tokens)", gpu, cpu)


_UNET_RESBLOCK = '''@torch.no_grad()
def run(x, emb, in_norm_weight, in_norm_bias, in_conv_weight, in_conv_bias, emb_weight, emb_bias, out_norm_weight,
        out_norm_bias, out_conv_weight, out_conv_bias, skip_weight, skip_bias):
    """sgm openaimodel ResBlock (use_scale_shift_norm False): GroupNorm32 (fp32, eps 1e-5) + SiLU + conv3x3,
    + Linear(SiLU(emb)) per channel, GroupNorm32 + SiLU + conv3x3, + 1x1 skip conv (channels change)."""
    acc = _acc(x)

    def gn_silu(z, weight, bias):
        return F.silu(F.group_norm(z.to(acc), 32, weight.to(acc), bias.to(acc), 1e-05).to(z.dtype))
    h = F.conv2d(gn_silu(x, in_norm_weight, in_norm_bias), in_conv_weight, in_conv_bias, padding=1)
    h = h + F.linear(F.silu(emb), emb_weight, emb_bias)[:, :, None, None]
    h = F.conv2d(gn_silu(h, out_norm_weight, out_norm_bias), out_conv_weight, out_conv_bias, padding=1)
    return (F.conv2d(x, skip_weight, skip_bias) + h).to(x.dtype)
'''


def sd21_resblock(m) -> ProblemDraft:
    base = m.config["model_channels"]
    c_in, c_out, temb = base, base * m.config["channel_mult"][1], 4 * base
    f = "bfloat16"
    gpu = _unet_grid(((2, 48, 48), (1, 48, 48), (2, 32, 32), (2, 48, 64), (2, 64, 48), (2, 40, 56), (2, 56, 40),
                      (4, 48, 48), (4, 32, 32), (2, 64, 64), (8, 32, 32), (8, 48, 48), (4, 64, 48), (16, 32, 32),
                      (4, 64, 64), (16, 48, 48)))
    cpu = grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), height=(2, 4, 4, 6, 4, 3, 8, 10), width=(2, 4, 4, 6, 7, 5, 8, 10))
    return _tiers(draft(
        m, f"{slug(m)}_unet_resblock_temb_c{c_in}_c{c_out}", "unet_resblock",
        f"{m.name} UNet ResBlock with timestep injection (sgm openaimodel.py ResBlock, input_blocks[4]: the first "
        f"block of level 1, model_channels {base} -> {c_out} = model_channels x channel_mult[1], at 1/16 of the "
        f"image: 48x48 at 768 px): in_layers GroupNorm32 (32 groups, computed in fp32, eps 1e-5) + SiLU + 3x3 "
        f"conv; emb_layers SiLU + Linear(time_embed_dim {temb} = 4 x model_channels -> {c_out}) added per channel; "
        "out_layers GroupNorm32 + SiLU + 3x3 conv; 1x1 conv skip. Batch x2 for classifier-free guidance.",
        {"batch_size": (None, "latents (x2 with CFG)"), "height": (None, "feature rows"), "width": (None, "feature columns"),
         "in_channels": (c_in, "model_channels"), "out_channels": (c_out, "model_channels x channel_mult[1]"),
         "time_embed_dim": (temb, "4 x model_channels"), "three": (3, "3x3"), "one": (1, "1x1")},
        {"x": (["batch_size", "in_channels", "height", "width"], f, 1.0),
         "emb": (["batch_size", "time_embed_dim"], f, 1.0),
         "in_norm_weight": (["in_channels"], f, 0.1, 1.0), "in_norm_bias": (["in_channels"], f, 0.1),
         "in_conv_weight": (["out_channels", "in_channels", "three", "three"], f, (9 * c_in) ** -0.5),
         "in_conv_bias": (["out_channels"], f, 0.1),
         "emb_weight": (["out_channels", "time_embed_dim"], f, temb ** -0.5), "emb_bias": (["out_channels"], f, 0.1),
         "out_norm_weight": (["out_channels"], f, 0.1, 1.0), "out_norm_bias": (["out_channels"], f, 0.1),
         "out_conv_weight": (["out_channels", "out_channels", "three", "three"], f, (9 * c_out) ** -0.5),
         "out_conv_bias": (["out_channels"], f, 0.1),
         "skip_weight": (["out_channels", "in_channels", "one", "one"], f, c_in ** -0.5),
         "skip_bias": (["out_channels"], f, 0.1)},
        {"output": (["batch_size", "out_channels", "height", "width"], f)},
        _body(_UNET_RESBLOCK), cpu),
        "L2", (), "unet_resblock", gpu)


_GEGLU = '''@torch.no_grad()
def run(hidden_states, proj_weight, proj_bias):
    """GEGLU (sgm / diffusers): proj to 2 x inner, value * GELU(gate) (exact erf GELU)."""
    h, gate = F.linear(hidden_states, proj_weight, proj_bias).chunk(2, dim=-1)
    return h * F.gelu(gate)
'''


def sdxl_geglu(m) -> ProblemDraft:
    c = m.config["model_channels"] * m.config["channel_mult"][2]
    inner = 4 * c
    gpu = [{"num_tokens": n} for n in (1024, 2048, 4096, 1008, 2016, 4032, 960, 1920, 3840, 8192, 8064, 16384,
                                       16128, 15360, 32768, 65536)]
    return _tiers(draft(
        m, f"{slug(m)}_geglu_c{c}_i{inner}", "geglu",
        f"{m.name} GEGLU projection of the feed-forward in the 10 BasicTransformerBlocks of the {c}-channel level "
        f"(transformer_depth[2] {m.config['transformer_depth'][2]}, model_channels x channel_mult[2]; sgm "
        f"attention.py GEGLU): Linear {c} -> 2 x {inner} with bias, value * GELU(gate) with exact GELU. Tokens: "
        "batch x 32x32 at 1024 px (1024 per latent, x2 with CFG) and the other SDXL aspect buckets.",
        {"num_tokens": (None, "latents x (H/32) x (W/32)"), "channels": (c, "model_channels x channel_mult[2]"),
         "two_inner": (2 * inner, "2 x 4 x channels"), "inner": (inner, "4 x channels")},
        {"hidden_states": (["num_tokens", "channels"], "bfloat16", 1.0),
         "proj_weight": (["two_inner", "channels"], "bfloat16", c ** -0.5),
         "proj_bias": (["two_inner"], "bfloat16", 0.1)},
        {"output": (["num_tokens", "inner"], "bfloat16")},
        _body(_GEGLU), [{"num_tokens": n} for n in (1, 7, 16, 64, 100, 128, 255, 512)]),
        "L1", (), "geglu", gpu)


# ================================ Stable Video Diffusion ==================================================

_ALPHA = '''def _alpha(image_only_indicator, mix_factor, ref):
    """AlphaBlender.get_alpha, merge_strategy learned_with_images: 1 for image-only frames, else sigmoid(mix)."""
    acc = _acc(ref)
    learned = torch.sigmoid(mix_factor.to(acc)).reshape(())
    return torch.where(image_only_indicator.bool(), torch.ones((), dtype=acc, device=ref.device), learned)
'''

_SVD_TEMPORAL = _ALPHA + '''

def _geglu_ff(z, proj_weight, proj_bias, out_weight, out_bias):
    p, gate = F.linear(z, proj_weight, proj_bias).chunk(2, dim=-1)
    return F.linear(p * F.gelu(gate), out_weight, out_bias)


@torch.no_grad()
def run(x, image_emb, image_only_indicator, pos_in_weight, pos_in_bias, pos_out_weight, pos_out_bias, norm_in_weight,
        norm_in_bias, ff_in_proj_weight, ff_in_proj_bias, ff_in_out_weight, ff_in_out_bias, norm1_weight, norm1_bias,
        attn1_qkv_weight, attn1_out_weight, attn1_out_bias, attn2_v_weight, attn2_out_weight, attn2_out_bias,
        norm3_weight, norm3_bias, ff_proj_weight, ff_proj_bias, ff_out_weight, ff_out_bias, mix_factor):
    """SpatialVideoTransformer's temporal half for one block: x_mix = x + time_pos_embed(frame index);
    VideoTransformerBlock over the frames of each spatial position; AlphaBlender(x, x_mix)."""
    b, t, s, c = x.shape
    acc = _acc(x)
    heads, ch = c // @HEAD_CH@, @HEAD_CH@
    half = c // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=acc, device=x.device) / half)
    args = torch.arange(t, dtype=acc, device=x.device)[:, None] * freqs[None]
    t_emb = torch.cat((torch.cos(args), torch.sin(args)), dim=-1).to(x.dtype)
    emb = F.linear(F.silu(F.linear(t_emb, pos_in_weight, pos_in_bias)), pos_out_weight, pos_out_bias)
    h = (x + emb[None, :, None]).permute(0, 2, 1, 3).reshape(b * s, t, c)      # (b s) t c

    def heads_of(z):
        return z.reshape(z.shape[0], -1, heads, ch).transpose(1, 2)

    h = h + _geglu_ff(_layer_norm(h, norm_in_weight, norm_in_bias, 1e-05), ff_in_proj_weight, ff_in_proj_bias,
                      ff_in_out_weight, ff_in_out_bias)
    q, k, v = F.linear(_layer_norm(h, norm1_weight, norm1_bias, 1e-05), attn1_qkv_weight).chunk(3, dim=-1)
    o = _sdpa(heads_of(q), heads_of(k), heads_of(v)).transpose(1, 2).reshape(b * s, t, c)
    h = h + F.linear(o, attn1_out_weight, attn1_out_bias)
    # temporal cross-attention to the first frame's context: one token (the CLIP image embedding), so the
    # softmax is 1 and attn2(norm2(h), ctx) = to_out(to_v(ctx)) for every position and frame of the video
    cross = F.linear(F.linear(image_emb[:, 0], attn2_v_weight), attn2_out_weight, attn2_out_bias)  # [b, c]
    h = h + cross.repeat_interleave(s, dim=0)[:, None]
    h = h + _geglu_ff(_layer_norm(h, norm3_weight, norm3_bias, 1e-05), ff_proj_weight, ff_proj_bias, ff_out_weight,
                      ff_out_bias)
    x_mix = h.reshape(b, s, t, c).permute(0, 2, 1, 3)
    alpha = _alpha(image_only_indicator, mix_factor, x)[:, :, None, None]
    return (alpha * x.to(acc) + (1.0 - alpha) * x_mix.to(acc)).to(x.dtype)
'''

_INDICATOR = "(torch.rand(shape, device=device) < 0.25)"


def _svd_workloads():
    """(videos, frames, rows, cols) at model_channels width (latent = image / 8): 576x1024 and 1024x576 clips of
    14 frames (img2vid), 25-frame and square variants; batch x2 with classifier-free guidance."""
    rows = ((2, 14, 72, 128), (1, 14, 72, 128), (2, 14, 128, 72), (2, 14, 64, 64), (2, 14, 96, 96),
            (2, 25, 72, 128), (1, 25, 72, 128), (2, 14, 64, 112), (2, 8, 72, 128), (4, 14, 72, 128),
            (2, 14, 80, 80), (4, 14, 64, 64), (4, 25, 72, 128), (2, 14, 72, 72), (4, 14, 96, 96), (2, 21, 72, 128))
    return [{"batch_size": b, "frames": t, "height": h, "width": w} for b, t, h, w in rows]


def _svd_cpu():
    return grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), frames=(2, 4, 3, 5, 14, 2, 3, 7),
                height=(2, 4, 4, 3, 2, 3, 6, 4), width=(2, 4, 4, 5, 3, 3, 6, 4))


def svd_temporal_block(m) -> ProblemDraft:
    c, head_ch, ctx = m.config["model_channels"], m.config["num_head_channels"], m.config["context_dim"]
    s = c ** -0.5
    f = "bfloat16"

    def lin(o, i, std):
        return ([o, i], f, std)
    inputs = {"x": (["batch_size", "frames", "tokens", "channels"], f, 1.0),
              "image_emb": (["batch_size", "context_len", "context_dim"], f, 1.0),
              "image_only_indicator": (["batch_size", "frames"], "float32", _INDICATOR),
              "pos_in_weight": lin("four_channels", "channels", s), "pos_in_bias": (["four_channels"], f, 0.1),
              "pos_out_weight": lin("channels", "four_channels", (4 * c) ** -0.5), "pos_out_bias": (["channels"], f, 0.1),
              "norm_in_weight": (["channels"], f, 0.1, 1.0), "norm_in_bias": (["channels"], f, 0.1),
              "ff_in_proj_weight": lin("eight_channels", "channels", s), "ff_in_proj_bias": (["eight_channels"], f, 0.1),
              "ff_in_out_weight": lin("channels", "four_channels", (4 * c) ** -0.5),
              "ff_in_out_bias": (["channels"], f, 0.1),
              "norm1_weight": (["channels"], f, 0.1, 1.0), "norm1_bias": (["channels"], f, 0.1),
              "attn1_qkv_weight": lin("three_channels", "channels", s),
              "attn1_out_weight": lin("channels", "channels", s), "attn1_out_bias": (["channels"], f, 0.1),
              "attn2_v_weight": lin("channels", "context_dim", ctx ** -0.5),
              "attn2_out_weight": lin("channels", "channels", s), "attn2_out_bias": (["channels"], f, 0.1),
              "norm3_weight": (["channels"], f, 0.1, 1.0), "norm3_bias": (["channels"], f, 0.1),
              "ff_proj_weight": lin("eight_channels", "channels", s), "ff_proj_bias": (["eight_channels"], f, 0.1),
              "ff_out_weight": lin("channels", "four_channels", (4 * c) ** -0.5), "ff_out_bias": (["channels"], f, 0.1),
              "mix_factor": (["one"], "float32", 1.0)}
    return _tiers(draft(
        m, f"{slug(m)}_temporal_attention_alpha_blend_c{c}", "temporal_attention",
        f"{m.name} temporal mixing of a SpatialVideoTransformer at model_channels {c} (sgm video_attention.py): "
        f"frame positions embedded (timestep_embedding of the frame index, time_pos_embed Linear-SiLU-Linear) and "
        f"added; VideoTransformerBlock over the frames of each spatial position (extra_ff_mix_layer: LayerNorm + "
        f"GEGLU ff_in with residual; self-attention across frames, {c // head_ch} heads of num_head_channels "
        f"{head_ch}; cross-attention to the first frame's context (use_spatial_context: the CLIP image embedding, "
        f"context_dim {ctx}, 1 token, so softmax = 1 and it reduces to to_out(to_v(context)): norm2, to_q and "
        "to_k drop out); LayerNorm + GEGLU FF); then AlphaBlender (merge_strategy "
        "learned_with_images): alpha = 1 for image-only frames, sigmoid(mix_factor) otherwise, out = alpha x "
        "x_spatial + (1 - alpha) x_temporal. x is the spatial block's output [videos, frames, H*W, C] at the "
        "latent resolution (image / 8); image_only_indicator marks image frames of a joint image-video batch.",
        {"batch_size": (None, "videos (x2 with CFG)"), "frames": (None, "video frames"),
         "height": (None, "latent rows"), "width": (None, "latent columns"), "tokens": ("height * width", "positions"),
         "channels": (c, "model_channels"), "context_len": (1, "CLIP image embedding tokens"),
         "context_dim": (ctx, "context_dim"), "three_channels": (3 * c, "q, k, v"),
         "four_channels": (4 * c, "FF inner / pos-embed hidden"), "eight_channels": (8 * c, "GEGLU proj"),
         "one": (1, "mix_factor")},
        inputs, {"output": (["batch_size", "frames", "tokens", "channels"], f)},
        _body(_SVD_TEMPORAL), _svd_cpu(), subs={"HEAD_CH": head_ch}),
        "L2", ("attention",), "svd_temporal_block", _svd_workloads())


_SVD_RESBLOCK = _ALPHA + '''

@torch.no_grad()
def run(x, emb, image_only_indicator, s_in_norm_weight, s_in_norm_bias, s_in_conv_weight, s_in_conv_bias, s_emb_weight,
        s_emb_bias, s_out_norm_weight, s_out_norm_bias, s_out_conv_weight, s_out_conv_bias, t_in_norm_weight,
        t_in_norm_bias, t_in_conv_weight, t_in_conv_bias, t_emb_weight, t_emb_bias, t_out_norm_weight, t_out_norm_bias,
        t_out_conv_weight, t_out_conv_bias, mix_factor):
    """sgm VideoResBlock: the spatial ResBlock per frame, the temporal ResBlock (dims 3, kernel (3, 1, 1),
    exchange_temb_dims) over the clip, and AlphaBlender (learned_with_images, pattern b t -> b 1 t 1 1)."""
    b, t = image_only_indicator.shape
    acc = _acc(x)

    def gn_silu(z, weight, bias):
        return F.silu(F.group_norm(z.to(acc), 32, weight.to(acc), bias.to(acc), 1e-05).to(z.dtype))
    e = F.silu(emb)
    h = F.conv2d(gn_silu(x, s_in_norm_weight, s_in_norm_bias), s_in_conv_weight, s_in_conv_bias, padding=1)
    h = h + F.linear(e, s_emb_weight, s_emb_bias)[:, :, None, None]
    h = F.conv2d(gn_silu(h, s_out_norm_weight, s_out_norm_bias), s_out_conv_weight, s_out_conv_bias, padding=1)
    xs = x + h
    c, hh, ww = xs.shape[1:]
    x5 = xs.view(b, t, c, hh, ww).permute(0, 2, 1, 3, 4)                                   # b c t h w
    h = F.conv3d(gn_silu(x5, t_in_norm_weight, t_in_norm_bias), t_in_conv_weight, t_in_conv_bias, padding=(1, 0, 0))
    h = h + F.linear(e, t_emb_weight, t_emb_bias).view(b, t, c).permute(0, 2, 1)[..., None, None]
    h = F.conv3d(gn_silu(h, t_out_norm_weight, t_out_norm_bias), t_out_conv_weight, t_out_conv_bias, padding=(1, 0, 0))
    alpha = _alpha(image_only_indicator, mix_factor, x)[:, None, :, None, None]
    out = alpha * x5.to(acc) + (1.0 - alpha) * (x5 + h).to(acc)
    return out.to(x.dtype).permute(0, 2, 1, 3, 4).reshape(b * t, c, hh, ww)
'''


def svd_video_resblock(m) -> ProblemDraft:
    c = m.config["model_channels"]
    temb, kt = 4 * c, m.config["video_kernel_size"][0]
    f = "bfloat16"
    inputs = {"x": (["batch_frames", "channels", "height", "width"], f, 1.0),
              "emb": (["batch_frames", "time_embed_dim"], f, 1.0),
              "image_only_indicator": (["batch_size", "frames"], "float32", "(torch.rand(shape, device=device) < 0.1)")}
    for p, kernel in (("s", ["three", "three"]), ("t", ["kt", "one", "one"])):
        fan = c * (9 if p == "s" else kt)
        inputs.update({f"{p}_in_norm_weight": (["channels"], f, 0.1, 1.0), f"{p}_in_norm_bias": (["channels"], f, 0.1),
                       f"{p}_in_conv_weight": (["channels", "channels", *kernel], f, fan ** -0.5),
                       f"{p}_in_conv_bias": (["channels"], f, 0.1),
                       f"{p}_emb_weight": (["channels", "time_embed_dim"], f, temb ** -0.5),
                       f"{p}_emb_bias": (["channels"], f, 0.1),
                       f"{p}_out_norm_weight": (["channels"], f, 0.1, 1.0), f"{p}_out_norm_bias": (["channels"], f, 0.1),
                       f"{p}_out_conv_weight": (["channels", "channels", *kernel], f, fan ** -0.5),
                       f"{p}_out_conv_bias": (["channels"], f, 0.1)})
    inputs["mix_factor"] = (["one"], "float32", 1.5)  # alpha = sigmoid(mix) spread over (0.05, 0.95)
    return _tiers(draft(
        m, f"{slug(m)}_video_resblock_c{c}", "video_resblock",
        f"{m.name} VideoResBlock at model_channels {c} (sgm diffusionmodules/video_model.py, input_blocks[1]): "
        f"the spatial ResBlock on each frame (GroupNorm32 in fp32 + SiLU + 3x3 conv, + Linear(SiLU(emb)) from "
        f"time_embed_dim {temb}, GroupNorm32 + SiLU + 3x3 conv, identity skip), then the temporal ResBlock over "
        f"[videos, C, frames, H, W] with video_kernel_size {m.config['video_kernel_size']} 3-D convs (padding 1 in "
        "time) and the per-frame embedding added per channel, identity skip; AlphaBlender (merge_strategy "
        "learned_with_images) mixes the spatial and temporal results. Latents at image / 8; frames 14 (img2vid).",
        {"batch_size": (None, "videos (x2 with CFG)"), "frames": (None, "video frames"),
         "batch_frames": ("batch_size * frames", "(videos frames)"), "height": (None, "latent rows"),
         "width": (None, "latent columns"), "channels": (c, "model_channels"),
         "time_embed_dim": (temb, "4 x model_channels"), "three": (3, "3x3"), "kt": (kt, "video_kernel_size[0]"),
         "one": (1, "1")},
        inputs, {"output": (["batch_frames", "channels", "height", "width"], f)},
        _body(_SVD_RESBLOCK), _svd_cpu()),
        "L2", (), "svd_video_resblock", _svd_workloads())


# ================================ Mochi 1 preview =====================================================

_MOCHI_TABLE = '''def _mochi_table(a, device, which):
    """create_position_matrix (positions interpolated to target_area 36864) x per-head frequencies, as
    compute_mixed_rotation gives rope_cos / rope_sin [N, heads, head_dim / 2]; the learned pos_frequencies
    are stood in for by theta-spaced ones (rope_theta 10000) scaled per head."""
    t, h, w, heads, half = a["frames"], a["height"], a["width"], @HEADS@, @HALF@
    scale = math.sqrt(36864 / (h * w))

    def centers(stop, num):
        edges = torch.linspace(0, stop, num + 1, dtype=torch.float32, device=device)
        return (edges[:-1] + edges[1:]) / 2
    grid = torch.meshgrid(torch.arange(t, dtype=torch.float32, device=device), centers(h * scale, h),
                          centers(w * scale, w), indexing="ij")
    pos = torch.stack(grid, dim=-1).reshape(-1, 3)
    base = 1.0 / (10000.0 ** (torch.arange(half, dtype=torch.float32, device=device) / half))
    per_head = 1.0 + torch.arange(heads, dtype=torch.float32, device=device)[:, None] / heads
    freqs = torch.stack([base * per_head, 0.5 * base * per_head, 0.5 * base * per_head])  # [3, heads, half]
    angle = torch.einsum("nd,dhf->nhf", pos, freqs)
    return angle.cos() if which == "cos" else angle.sin()
'''

_MOCHI_ATTN = _MOCHI_TABLE + '''

@torch.no_grad()
def run(x, y, scale_x, scale_y, qkv_x_weight, qkv_y_weight, q_norm_x_weight, k_norm_x_weight, q_norm_y_weight,
        k_norm_y_weight, proj_x_weight, proj_x_bias, proj_y_weight, proj_y_bias, rope_cos, rope_sin):
    """AsymmetricAttention.forward (prepare_qkv, run_attention) for one block, all text tokens valid."""
    b, n, _ = x.shape
    l = y.shape[1]
    heads = @HEADS@
    acc = _acc(x)

    def modulated_rmsnorm(z, scale):
        zf = z.to(acc)
        return (zf * torch.rsqrt(zf.pow(2).mean(-1, keepdim=True) + 1e-06) * (1 + scale.to(acc)[:, None])).to(z.dtype)

    def head_rmsnorm(z, weight):  # layers.RMSNorm(head_dim), eps 1e-5, fp32
        zf = z.to(acc)
        return (zf * torch.rsqrt(zf.pow(2).mean(-1, keepdim=True) + 1e-05) * weight.to(acc)).to(z.dtype)
    qx, kx, vx = F.linear(modulated_rmsnorm(x, scale_x), qkv_x_weight).view(b, n, 3, heads, -1).unbind(2)
    qy, ky, vy = F.linear(modulated_rmsnorm(y, scale_y), qkv_y_weight).view(b, l, 3, heads, -1).unbind(2)
    qx = _rope_pairs(head_rmsnorm(qx, q_norm_x_weight), rope_cos, rope_sin)
    kx = _rope_pairs(head_rmsnorm(kx, k_norm_x_weight), rope_cos, rope_sin)
    qy, ky = head_rmsnorm(qy, q_norm_y_weight), head_rmsnorm(ky, k_norm_y_weight)
    q, k, v = (torch.cat(pair, dim=1).transpose(1, 2) for pair in ((qx, qy), (kx, ky), (vx, vy)))
    o = _sdpa(q, k, v).transpose(1, 2).flatten(2)
    return F.linear(o[:, :n], proj_x_weight, proj_x_bias), F.linear(o[:, n:], proj_y_weight, proj_y_bias)
'''

_MOCHI_T = "_mochi_table(a, device, {!r})"


def _mochi_workloads():
    """(batch, latent frames, rows, cols, text): 480x848 (latents 60x106 / 8, 2x2 patches: 30x53) clips of
    31-163 frames ((n - 1) / 6 + 1 latent frames; 163 = 28), prompts of 64-256 valid T5 tokens."""
    rows = ((1, 28, 30, 53, 256), (1, 28, 30, 53, 128), (1, 6, 30, 53, 256), (1, 11, 30, 53, 256),
            (1, 16, 30, 53, 256), (1, 22, 30, 53, 256), (2, 28, 30, 53, 256), (2, 6, 30, 53, 128),
            (1, 28, 53, 30, 256), (1, 14, 30, 53, 64), (2, 16, 30, 53, 256), (1, 28, 36, 36, 256),
            (2, 11, 30, 53, 200), (1, 20, 30, 53, 77), (1, 8, 30, 53, 256), (2, 22, 30, 53, 256))
    return [{"batch_size": b, "frames": t, "height": h, "width": w, "text_len": l} for b, t, h, w, l in rows]


def mochi_joint_attention(m) -> ProblemDraft:
    dx, dy, heads = m.config["hidden_size_x"], m.config["hidden_size_y"], m.config["num_heads"]
    hd = dx // heads
    f = "bfloat16"
    return _tiers(draft(
        m, f"{slug(m)}_asymm_joint_attention_dx{dx}_dy{dy}_h{heads}", "joint_attention",
        f"{m.name} asymmetric joint attention (genmo asymm_models_joint.py AsymmetricAttention): visual stream "
        f"hidden_size_x {dx} and text stream hidden_size_y {dy}, each modulated_rmsnorm'd (x * rsqrt(mean x^2 + "
        f"1e-6) * (1 + scale_msa)), projected to 3 x {dx} without bias (qkv_bias False; qkv_y lifts text to the "
        f"visual width), per-head RMSNorm on q and k of both streams (qk_norm, eps 1e-5), the mixed 3-D RoPE on "
        f"the visual q and k only (apply_rotary_emb_qk_real: interleaved pairs, per-head rope_cos / rope_sin "
        f"[N, {heads}, {hd // 2}] from compute_mixed_rotation), attention over [visual, valid text] ({heads} heads "
        f"of {hd} = hidden_size_x / num_heads), proj_x ({dx} -> {dx}) and proj_y ({dx} -> {dy}) with bias "
        f"(out_bias). Outputs are the two streams' attention outputs before residual_tanh_gated_rmsnorm. Text: "
        f"the valid tokens of t5_token_length {m.config['t5_token_length']} (padding is dropped by the varlen "
        "packing).",
        {"batch_size": (None, "videos"), "frames": (None, "latent frames"), "height": (None, "patch rows"),
         "width": (None, "patch columns"), "num_tokens": ("frames * height * width", "visual tokens"),
         "text_len": (None, "valid T5 tokens"), "dim_x": (dx, "hidden_size_x"), "dim_y": (dy, "hidden_size_y"),
         "qkv_dim": (3 * dx, "3 x hidden_size_x"), "head_dim": (hd, "hidden_size_x / num_heads"),
         "num_heads": (heads, "num_heads"), "half_head": (hd // 2, "rotated pairs")},
        {"x": (["batch_size", "num_tokens", "dim_x"], f, 1.0), "y": (["batch_size", "text_len", "dim_y"], f, 1.0),
         "scale_x": (["batch_size", "dim_x"], f, 0.3), "scale_y": (["batch_size", "dim_y"], f, 0.3),
         "qkv_x_weight": (["qkv_dim", "dim_x"], f, dx ** -0.5), "qkv_y_weight": (["qkv_dim", "dim_y"], f, dy ** -0.5),
         "q_norm_x_weight": (["head_dim"], f, 0.1, 1.0), "k_norm_x_weight": (["head_dim"], f, 0.1, 1.0),
         "q_norm_y_weight": (["head_dim"], f, 0.1, 1.0), "k_norm_y_weight": (["head_dim"], f, 0.1, 1.0),
         "proj_x_weight": (["dim_x", "dim_x"], f, dx ** -0.5), "proj_x_bias": (["dim_x"], f, 0.1),
         "proj_y_weight": (["dim_y", "dim_x"], f, dx ** -0.5), "proj_y_bias": (["dim_y"], f, 0.1),
         "rope_cos": (["num_tokens", "num_heads", "half_head"], "float32", _MOCHI_T.format("cos")),
         "rope_sin": (["num_tokens", "num_heads", "half_head"], "float32", _MOCHI_T.format("sin"))},
        {"x_attn": (["batch_size", "num_tokens", "dim_x"], f), "y_attn": (["batch_size", "text_len", "dim_y"], f)},
        _body(_MOCHI_ATTN), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), frames=(1, 2, 1, 3, 2, 1, 4, 2),
                                 height=(2, 2, 4, 2, 4, 3, 3, 4), width=(2, 4, 4, 3, 4, 3, 4, 6),
                                 text_len=(4, 8, 8, 16, 7, 12, 5, 20)),
        subs={"HEADS": heads, "HALF": hd // 2}),
        "L2", ("attention", "rope_kv"), "mochi_asymm_attention", _mochi_workloads())


_MOCHI_RESIDUAL = '''@torch.no_grad()
def run(x, x_res, gate):
    """residual_tanh_gated_rmsnorm: x + rmsnorm(x_res) (fp32, eps 1e-6) * tanh(gate)."""
    acc = _acc(x)
    r = x_res.to(acc)
    r = r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + 1e-06) * torch.tanh(gate.to(acc))[:, None]
    return x + r.to(x.dtype)
'''


def mochi_gated_residual(m) -> ProblemDraft:
    dx = m.config["hidden_size_x"]
    f = "bfloat16"
    gpu = [{"batch_size": 1, "num_tokens": n} for n in (44520, 9540, 17490, 25440, 34980, 4770, 12720, 31800)]
    gpu += [{"batch_size": 2, "num_tokens": n} for n in (44520, 9540, 17490, 25440, 34980, 4770, 12720, 31800)]
    return _tiers(draft(
        m, f"{slug(m)}_residual_tanh_gated_rmsnorm_d{dx}", "gated_residual_norm",
        f"{m.name} sandwich-norm residual of the visual stream (residual_tanh_gated_rmsnorm, after attention and "
        f"after the MLP of every AsymmetricJointBlock): x + RMSNorm(x_res) * tanh(gate), the norm in fp32 with eps "
        f"1e-6 and no weight, gate one of the mod_x chunks [B, hidden_size_x {dx}]. Tokens: latent frames x 30 x 53 "
        "(480x848, 2x2 patches), 28 latent frames for 163 video frames.",
        {"batch_size": (None, "videos"), "num_tokens": (None, "visual tokens"), "dim_x": (dx, "hidden_size_x")},
        {"x": (["batch_size", "num_tokens", "dim_x"], f, 1.0), "x_res": (["batch_size", "num_tokens", "dim_x"], f, 1.0),
         "gate": (["batch_size", "dim_x"], f, 1.0)},
        {"output": (["batch_size", "num_tokens", "dim_x"], f)},
        _body(_MOCHI_RESIDUAL), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 3), num_tokens=(1, 7, 16, 64, 100, 128, 255, 60))),
        "L1", (), "tanh_gated_rmsnorm", gpu)


# ================================ CogVideoX ===========================================================

def _cog_workloads(text: int):
    """(batch, latent frames, rows, cols): 720x480 clips (latents 60x90, 2x2 patches: 30x45) of 9-49 frames
    ((n - 1) / 4 + 1 latent frames; 49 -> 13), batch x2 with classifier-free guidance."""
    rows = ((2, 13, 30, 45), (1, 13, 30, 45), (2, 1, 30, 45), (2, 3, 30, 45), (2, 5, 30, 45), (2, 7, 30, 45),
            (2, 9, 30, 45), (2, 11, 30, 45), (1, 7, 30, 45), (4, 13, 30, 45), (4, 7, 30, 45), (1, 1, 30, 45),
            (2, 13, 45, 30), (4, 9, 30, 45), (4, 3, 30, 45), (1, 9, 30, 45))
    return [{"batch_size": b, "frames": t, "height": h, "width": w} for b, t, h, w in rows]


def _cog_cpu():
    return grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), frames=(1, 2, 1, 3, 2, 1, 4, 2),
                height=(2, 2, 4, 2, 4, 3, 3, 4), width=(2, 4, 4, 3, 4, 3, 4, 6))


_COG_ADALN = '''@torch.no_grad()
def run(hidden_states, encoder_hidden_states, temb, linear_weight, linear_bias, norm_weight, norm_bias):
    """CogVideoXLayerNormZero: one LayerNorm (affine, eps 1e-5) for both token types, expert modulation each."""
    acc = _acc(hidden_states)
    mod = F.linear(F.silu(temb), linear_weight, linear_bias).to(acc)
    shift, scale, gate, enc_shift, enc_scale, enc_gate = mod.chunk(6, dim=1)
    h = _layer_norm(hidden_states, norm_weight, norm_bias, 1e-05).to(acc) * (1 + scale[:, None]) + shift[:, None]
    e = _layer_norm(encoder_hidden_states, norm_weight, norm_bias, 1e-05).to(acc) * (1 + enc_scale[:, None]) \\
        + enc_shift[:, None]
    dt = hidden_states.dtype
    return h.to(dt), e.to(dt), torch.stack((gate, enc_gate), dim=1).to(dt)
'''


def cogvideox_expert_adaln(m) -> ProblemDraft:
    d, temb, text = m.config["hidden_size"], m.config["time_embed_dim"], m.config["text_length"]
    f = "bfloat16"
    return _tiers(draft(
        m, f"{slug(m)}_expert_adaln_d{d}_t{temb}", "adaln",
        f"{m.name} expert adaptive LayerNorm (diffusers CogVideoXLayerNormZero; SAT AdaLNMixin): Linear(SiLU(temb)) "
        f"from time_embed_dim {temb} to 6 x hidden_size {d} = shift, scale, gate for the video tokens and separate "
        f"ones for the text tokens (the 'experts'); one shared LayerNorm (elementwise_affine, eps 1e-5) normalises "
        f"both, each modulated by its own (1 + scale) and shift; returns both normalised streams and the two gates. "
        f"Text: text_length {text} T5 tokens; video: latent frames x 30 x 45 patches (latent_height "
        f"{m.config['latent_height']} x latent_width {m.config['latent_width']}, patch_size 2; num_frames 49 -> 13 "
        "latent frames).",
        {"batch_size": (None, "videos (x2 with CFG)"), "frames": (None, "latent frames"), "height": (None, "patch rows"),
         "width": (None, "patch columns"), "num_tokens": ("frames * height * width", "video tokens"),
         "text_len": (text, "text_length"), "hidden_size": (d, "hidden_size"), "time_embed_dim": (temb, "time_embed_dim"),
         "six_hidden": (6 * d, "6 x hidden_size"), "two": (2, "video gate, text gate")},
        {"hidden_states": (["batch_size", "num_tokens", "hidden_size"], f, 1.0),
         "encoder_hidden_states": (["batch_size", "text_len", "hidden_size"], f, 1.0),
         "temb": (["batch_size", "time_embed_dim"], f, 1.0),
         "linear_weight": (["six_hidden", "time_embed_dim"], f, temb ** -0.5),
         "linear_bias": (["six_hidden"], f, 0.1),
         "norm_weight": (["hidden_size"], f, 0.1, 1.0), "norm_bias": (["hidden_size"], f, 0.1)},
        {"norm_hidden_states": (["batch_size", "num_tokens", "hidden_size"], f),
         "norm_encoder_hidden_states": (["batch_size", "text_len", "hidden_size"], f),
         "gates": (["batch_size", "two", "hidden_size"], f)},
        _body(_COG_ADALN), _cog_cpu()),
        "L2", (), "cogvideox_adaln", _cog_workloads(text))


_COG_ADALN_BWD = '''def run(hidden_states, encoder_hidden_states, temb, linear_weight, linear_bias, norm_weight, norm_bias,
        grad_norm_hidden_states, grad_norm_encoder_hidden_states, grad_gates):
    """Backward of CogVideoXLayerNormZero (fp32 inside, as autocast keeps LayerNorm): gradients of every input."""
    acc = _acc(hidden_states)
    with torch.enable_grad():
        params = [z.detach().to(acc).requires_grad_() for z in (hidden_states, encoder_hidden_states, temb,
                                                                 linear_weight, linear_bias, norm_weight, norm_bias)]
        x, c, t, w, bias, nw, nb = params
        shift, scale, gate, enc_shift, enc_scale, enc_gate = F.linear(F.silu(t), w, bias).chunk(6, dim=1)
        h = F.layer_norm(x, (x.shape[-1],), nw, nb, 1e-05) * (1 + scale[:, None]) + shift[:, None]
        e = F.layer_norm(c, (c.shape[-1],), nw, nb, 1e-05) * (1 + enc_scale[:, None]) + enc_shift[:, None]
        grads = torch.autograd.grad((h, e, torch.stack((gate, enc_gate), dim=1)), params,
                                    (grad_norm_hidden_states.to(acc), grad_norm_encoder_hidden_states.to(acc),
                                     grad_gates.to(acc)))
    return tuple(g.to(hidden_states.dtype) for g in grads)
'''


def cogvideox_expert_adaln_backward(m) -> ProblemDraft:
    d, temb, text = m.config["hidden_size"], m.config["time_embed_dim"], m.config["text_length"]
    f = "bfloat16"
    video, txt = ["batch_size", "num_tokens", "hidden_size"], ["batch_size", "text_len", "hidden_size"]
    return _tiers(draft(
        m, f"{slug(m)}_expert_adaln_backward_d{d}_t{temb}", "adaln_backward",
        f"Backward of {m.name}'s expert adaptive LayerNorm (CogVideoXLayerNormZero: Linear(SiLU(temb)) from "
        f"time_embed_dim {temb} to 6 x hidden_size {d}, one shared LayerNorm with affine (elementwise_affine, eps "
        "1e-5) modulated separately for video and text tokens) as in fine-tuning: given the gradients of the two "
        "normalised streams and of the two gates, the gradients of the video and text hidden states, temb, the "
        f"modulation Linear's weight and bias and the LayerNorm's weight and bias; fp32 inside, bf16 in and out. "
        f"Text: text_length {text}; video: latent frames x 30 x 45 (latent_height {m.config['latent_height']} x "
        f"latent_width {m.config['latent_width']}, patch_size 2).",
        {"batch_size": (None, "videos"), "frames": (None, "latent frames"), "height": (None, "patch rows"),
         "width": (None, "patch columns"), "num_tokens": ("frames * height * width", "video tokens"),
         "text_len": (text, "text_length"), "hidden_size": (d, "hidden_size"), "time_embed_dim": (temb, "time_embed_dim"),
         "six_hidden": (6 * d, "6 x hidden_size"), "two": (2, "video gate, text gate")},
        {"hidden_states": (video, f, 1.0), "encoder_hidden_states": (txt, f, 1.0),
         "temb": (["batch_size", "time_embed_dim"], f, 1.0),
         "linear_weight": (["six_hidden", "time_embed_dim"], f, temb ** -0.5),
         "linear_bias": (["six_hidden"], f, 0.1),
         "norm_weight": (["hidden_size"], f, 0.1, 1.0), "norm_bias": (["hidden_size"], f, 0.1),
         "grad_norm_hidden_states": (video, f, 1.0), "grad_norm_encoder_hidden_states": (txt, f, 1.0),
         "grad_gates": (["batch_size", "two", "hidden_size"], f, 1.0)},
        {"grad_hidden_states": (video, f), "grad_encoder_hidden_states": (txt, f),
         "grad_temb": (["batch_size", "time_embed_dim"], f), "grad_linear_weight": (["six_hidden", "time_embed_dim"], f),
         "grad_linear_bias": (["six_hidden"], f), "grad_norm_weight": (["hidden_size"], f),
         "grad_norm_bias": (["hidden_size"], f)},
        _body(_COG_ADALN_BWD), _cog_cpu(), backward=True),
        "L2", (), "cogvideox_adaln_backward", _cog_workloads(text))


_COG_TABLE = '''def _cog_table(a, device, which):
    """get_3d_rotary_pos_embed (use_real) for head_dim 64: 16 dims over frames, 24 over rows, 24 over columns
    (theta 10000), pairs interleaved; positions are the patch indices (the 720x480 grid is the base grid)."""
    t, h, w = a["frames"], a["height"], a["width"]
    parts = []
    for size, dim, axis in ((t, 16, 0), (h, 24, 1), (w, 24, 2)):
        inv = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim))
        ang = torch.arange(size, dtype=torch.float64, device=device)[:, None] * inv[None]
        shape = [1, 1, 1, dim // 2]
        shape[axis] = size
        parts.append(ang.view(shape).expand(t, h, w, dim // 2))
    angle = torch.cat(parts, dim=-1).reshape(t * h * w, -1).float()
    return angle.cos() if which == "cos" else angle.sin()
'''

_COG_ATTN = _COG_TABLE + '''

@torch.no_grad()
def run(hidden_states, encoder_hidden_states, q_weight, q_bias, k_weight, k_bias, v_weight, v_bias, norm_q_weight,
        norm_q_bias, norm_k_weight, norm_k_bias, out_weight, out_bias, rope_cos, rope_sin):
    """CogVideoXAttnProcessor2_0: full 3-D attention over [text, video], q/k LayerNorm, RoPE on video tokens."""
    b, nv, d = hidden_states.shape
    nt = encoder_hidden_states.shape[1]
    heads = @HEADS@
    x = torch.cat((encoder_hidden_states, hidden_states), dim=1)

    def split(z):
        return z.view(b, nt + nv, heads, -1).transpose(1, 2)
    q, k, v = (split(F.linear(x, w, bias)) for w, bias in ((q_weight, q_bias), (k_weight, k_bias), (v_weight, v_bias)))
    q = _layer_norm(q, norm_q_weight, norm_q_bias, 1e-06)
    k = _layer_norm(k, norm_k_weight, norm_k_bias, 1e-06)
    q = torch.cat((q[:, :, :nt], _rope_pairs(q[:, :, nt:], rope_cos, rope_sin)), dim=2)
    k = torch.cat((k[:, :, :nt], _rope_pairs(k[:, :, nt:], rope_cos, rope_sin)), dim=2)
    o = F.linear(_sdpa(q, k, v).transpose(1, 2).reshape(b, nt + nv, d), out_weight, out_bias)
    return o[:, nt:], o[:, :nt]
'''

_COG_T = "_cog_table(a, device, {!r})"


def cogvideox_attention(m) -> ProblemDraft:
    d, heads, hd, text = (m.config["hidden_size"], m.config["num_attention_heads"], m.config["derived.head_dim"],
                          m.config["text_length"])
    f = "bfloat16"
    s = d ** -0.5
    inputs = {"hidden_states": (["batch_size", "num_tokens", "hidden_size"], f, 1.0),
              "encoder_hidden_states": (["batch_size", "text_len", "hidden_size"], f, 1.0)}
    # biases at 0.5: k's bias and k_norm's bias act only through the per-key norm and the RoPE of video keys
    # (on text keys a common shift cancels in the softmax), so small ones would leave the output unchanged
    for n in ("q", "k", "v"):
        inputs[f"{n}_weight"] = (["hidden_size", "hidden_size"], f, s)
        inputs[f"{n}_bias"] = (["hidden_size"], f, 0.5)
    inputs.update({"norm_q_weight": (["head_dim"], f, 0.1, 1.0), "norm_q_bias": (["head_dim"], f, 0.5),
                   "norm_k_weight": (["head_dim"], f, 0.1, 1.0), "norm_k_bias": (["head_dim"], f, 0.5),
                   "out_weight": (["hidden_size", "hidden_size"], f, s), "out_bias": (["hidden_size"], f, 0.1),
                   "rope_cos": (["num_tokens", "half_head"], "float32", _COG_T.format("cos")),
                   "rope_sin": (["num_tokens", "half_head"], "float32", _COG_T.format("sin"))})
    return _tiers(draft(
        m, f"{slug(m)}_3d_full_attention_rope_d{d}_h{heads}", "joint_attention",
        f"{m.name} 3-D full attention (diffusers CogVideoXAttnProcessor2_0, the attn1 of CogVideoXBlock on the "
        f"already modulated streams): text (text_length {text}) and video tokens concatenated, to_q/k/v with bias, "
        f"LayerNorm on q and k per head (qk_norm, eps 1e-6, affine), 3-D RoPE on the video part of q and k only "
        f"(Rotary3DPositionEmbedding: head_dim {hd} split 16/24/24 over frames/rows/columns, theta 10000; "
        f"tables as inputs), bidirectional attention over all {text} + video tokens ({heads} heads of {hd}), to_out "
        "with bias, split back into (video, text). Video: latent frames x 30 x 45 (720x480, patch_size 2).",
        {"batch_size": (None, "videos (x2 with CFG)"), "frames": (None, "latent frames"), "height": (None, "patch rows"),
         "width": (None, "patch columns"), "num_tokens": ("frames * height * width", "video tokens"),
         "text_len": (text, "text_length"), "hidden_size": (d, "hidden_size"), "head_dim": (hd, "derived.head_dim"),
         "half_head": (hd // 2, "rotated pairs")},
        inputs,
        {"hidden_states_out": (["batch_size", "num_tokens", "hidden_size"], f),
         "encoder_hidden_states_out": (["batch_size", "text_len", "hidden_size"], f)},
        _body(_COG_ATTN), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), frames=(2, 3, 2, 4, 2, 3, 5, 2),
                               height=(8, 8, 8, 6, 10, 6, 6, 12), width=(8, 8, 8, 8, 8, 8, 6, 8)),
        subs={"HEADS": heads}),
        "L2", ("attention", "rope_kv"), "cogvideox_attention", _cog_workloads(text))


_COG15_PATCH = '''@torch.no_grad()
def run(latents, text_embeds, text_proj_weight, text_proj_bias, proj_weight, proj_bias):
    """CogVideoXPatchEmbed with patch_size_t: text_proj(text) ++ proj(patchify(latents)) (no positional table)."""
    b, f, c, hh, ww = latents.shape
    p, pt = @P@, @PT@
    x = latents.permute(0, 1, 3, 4, 2).reshape(b, f // pt, pt, hh // p, p, ww // p, p, c)
    x = x.permute(0, 1, 3, 5, 7, 2, 4, 6).flatten(4, 7).flatten(1, 3)
    return torch.cat((F.linear(text_embeds, text_proj_weight, text_proj_bias), F.linear(x, proj_weight, proj_bias)), dim=1)
'''


def cogvideox15_patch_embed(m) -> ProblemDraft:
    d, c, (pt, p, _), tdim, text = (m.config["hidden_size"], m.config["in_channels"], m.config["patch_size"],
                                    m.config["text_hidden_size"], m.config["text_length"])
    f = "bfloat16"
    patch = c * p * p * pt
    # 81 frames -> 21 latent frames, padded to 22 (a multiple of patch_size_t) by the pipeline; 1360x768 -> 170x96
    rows = ((1, 11, 48, 85), (2, 11, 48, 85), (1, 11, 85, 48), (1, 1, 48, 85), (1, 3, 48, 85), (1, 5, 48, 85),
            (1, 7, 48, 85), (1, 9, 48, 85), (2, 5, 48, 85), (2, 7, 48, 85), (1, 11, 40, 64), (1, 11, 60, 90),
            (2, 9, 48, 85), (1, 6, 48, 85), (4, 11, 48, 85), (2, 11, 85, 48))
    gpu = [{"batch_size": b, "frame_pairs": t, "patch_rows": h, "patch_cols": w} for b, t, h, w in rows]
    return _tiers(draft(
        m, f"{slug(m)}_patch_embed_t{pt}_p{p}_d{d}", "patch_embed",
        f"{m.name} patch embedding (diffusers CogVideoXPatchEmbed with patch_size_t): latents [B, frames, "
        f"in_channels {c}, H/8, W/8] cut into {pt}x{p}x{p} patches (patch_size {m.config['patch_size']}) flattened "
        f"as (channels, t, h, w) -> {patch}, Linear {patch} -> hidden_size {d}; the T5 states (text_length {text} "
        f"x text_hidden_size {tdim}) through text_proj Linear {tdim} -> {d}; output [text, video] tokens. Video: "
        f"1360x768 (latents 96x170), num_frames {m.config['num_frames']} -> 21 latent frames padded to 22.",
        {"batch_size": (None, "videos"), "frame_pairs": (None, "latent frames / patch_size_t"),
         "patch_rows": (None, "latent rows / 2"), "patch_cols": (None, "latent columns / 2"),
         "latent_frames": ("frame_pairs * 2", "latent frames"), "latent_height": ("patch_rows * 2", "H / 8"),
         "latent_width": ("patch_cols * 2", "W / 8"), "channels": (c, "in_channels"), "text_len": (text, "text_length"),
         "text_dim": (tdim, "text_hidden_size"), "patch_dim": (patch, "in_channels x patch volume"),
         "hidden_size": (d, "hidden_size"),
         "num_tokens": ("text_len + frame_pairs * patch_rows * patch_cols", "text + video tokens")},
        {"latents": (["batch_size", "latent_frames", "channels", "latent_height", "latent_width"], f, 1.0),
         "text_embeds": (["batch_size", "text_len", "text_dim"], f, 1.0),
         "text_proj_weight": (["hidden_size", "text_dim"], f, tdim ** -0.5),
         "text_proj_bias": (["hidden_size"], f, 0.1),
         "proj_weight": (["hidden_size", "patch_dim"], f, patch ** -0.5), "proj_bias": (["hidden_size"], f, 0.1)},
        {"embeds": (["batch_size", "num_tokens", "hidden_size"], f)},
        _body(_COG15_PATCH), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), frame_pairs=(1, 2, 1, 3, 2, 1, 4, 2),
                                  patch_rows=(2, 2, 4, 2, 4, 3, 3, 4), patch_cols=(2, 4, 4, 3, 4, 3, 4, 6)),
        subs={"P": p, "PT": pt}),
        "L1", (), "patch_embed", gpu)


# ================================ Wan2.2 ==============================================================

_WAN_SELF_ATTN = WAN_ROPE_3D + '''

@torch.no_grad()
def run(x, e, modulation, q_weight, q_bias, k_weight, k_bias, v_weight, v_bias, o_weight, o_bias, norm_q_weight,
        norm_k_weight):
    """WanAttentionBlock.forward, self-attention residual: e = modulation + e0 (per token, fp32);
    y = self_attn(norm1(x) * (1 + e[1]) + e[0]); x = x + y * e[2] in fp32."""
    b, f, hh, ww, d = x.shape
    s = f * hh * ww
    heads = @HEADS@
    lowp = q_weight.dtype
    acc = _acc(x)
    x = x.reshape(b, s, d)
    mod = modulation.to(acc)[None, None] + e.to(acc)                 # [b, s, 3, d]
    h = (_layer_norm(x, None, None, @EPS@).to(acc) * (1 + mod[:, :, 1]) + mod[:, :, 0]).to(lowp)
    q = _rmsnorm(F.linear(h, q_weight, q_bias), norm_q_weight, @EPS@).view(b, s, heads, -1)
    k = _rmsnorm(F.linear(h, k_weight, k_bias), norm_k_weight, @EPS@).view(b, s, heads, -1)
    v = F.linear(h, v_weight, v_bias).view(b, s, heads, -1)
    q, k = _rope_3d(q, f, hh, ww), _rope_3d(k, f, hh, ww)
    o = _sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2).reshape(b, s, d)
    y = F.linear(o, o_weight, o_bias)
    return (x.to(acc) + y.to(acc) * mod[:, :, 2]).to(x.dtype).view(b, f, hh, ww, d)
'''


def wan22_a14b_self_attention(m) -> ProblemDraft:
    d, heads, eps = m.config["dim"], m.config["num_heads"], m.config["eps"]
    hd = d // heads
    f = "bfloat16"
    s = d ** -0.5
    inputs = {"x": (["batch_size", "frames", "height", "width", "dim"], "float32", 1.0),
              "e": (["batch_size", "num_tokens", "three", "dim"], "float32", 0.3),
              "modulation": (["three", "dim"], "float32", d ** -0.5)}
    for n in ("q", "k", "v", "o"):  # biases at 0.5: k's acts only through the RMSNorm over 5120 and the RoPE
        inputs[f"{n}_weight"] = (["dim", "dim"], f, s)
        inputs[f"{n}_bias"] = (["dim"], f, 0.5)
    inputs["norm_q_weight"] = (["dim"], f, 0.1, 1.0)
    inputs["norm_k_weight"] = (["dim"], f, 0.1, 1.0)
    # 720p (1280x720: latents 90x160 / vae_stride 8, 2x2 patches 45x80) and 480p (832x480: 30x52), 81 frames -> 21
    rows = ((1, 21, 45, 80), (1, 21, 30, 52), (1, 1, 45, 80), (1, 5, 45, 80), (1, 9, 45, 80), (1, 13, 45, 80),
            (1, 17, 45, 80), (1, 1, 30, 52), (1, 5, 30, 52), (1, 9, 30, 52), (1, 13, 30, 52), (1, 17, 30, 52),
            (2, 21, 30, 52), (1, 21, 80, 45), (1, 21, 52, 30), (2, 9, 45, 80))
    gpu = [{"batch_size": b, "frames": t, "height": h, "width": w} for b, t, h, w in rows]
    return _tiers(draft(
        m, f"{slug(m)}_high_noise_expert_self_attention_d{d}_h{heads}", "attention_block",
        f"{m.name} self-attention residual of a DiT block of the selected expert: the A14B's mixture over "
        f"timesteps runs the high-noise expert for t >= boundary {m.config['boundary']} x 1000 and the low-noise "
        "one below (same architecture, other weights), so one expert's block is the kernel. WanAttentionBlock."
        f"forward (wan/modules/model.py): per-token modulation e = modulation + e0 (fp32; e holds e0's shift, "
        f"scale, gate rows for this step), LayerNorm (no affine, eps {eps}) * (1 + scale) + shift, q/k/v "
        f"projections with bias in bf16, RMSNorm over the full dim on q and k (qk_norm, WanRMSNorm), 3-D RoPE "
        f"(head_dim {hd}: 22/21/21 pairs over frame/row/column), bidirectional attention ({heads} heads), o "
        f"projection, then x + y * gate in fp32 (x is the fp32 residual stream; the tolerance is bf16's, as the "
        f"attention path is computed in bf16). Grid: latent frames (81 frames "
        f"-> 21) x (H/16) x (W/16) (vae_stride {m.config['vae_stride']}, patch_size {m.config['patch_size']}).",
        {"batch_size": (None, "videos"), "frames": (None, "latent frames"), "height": (None, "patch rows"),
         "width": (None, "patch columns"), "num_tokens": ("frames * height * width", "video tokens"),
         "dim": (d, "dim"), "three": (3, "shift, scale, gate")},
        inputs, {"output": (["batch_size", "frames", "height", "width", "dim"], "float32")},
        _body(_WAN_SELF_ATTN), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), frames=(1, 2, 1, 3, 2, 1, 4, 2),
                                    height=(2, 2, 4, 2, 4, 3, 3, 4), width=(2, 4, 4, 3, 4, 3, 4, 6)),
        subs={"HEADS": heads, "EPS": eps}),
        "L2", ("attention", "rope_kv"), "wan_self_attention", gpu, tolerance="bfloat16")


_WAN_TIME = '''def _ti2v_timesteps(a, device):
    """TI2V per-token timesteps: the first latent frame (the conditioning image) at 0, the rest at this step's t."""
    b, f, h, w = a["batch_size"], a["frames"], a["height"], a["width"]
    t = (torch.rand(b, 1, device=device) * 1000).expand(b, f * h * w).clone()
    t[:, : h * w] = 0
    return t


@torch.no_grad()
def run(t, emb1_weight, emb1_bias, emb2_weight, emb2_bias, proj_weight, proj_bias):
    """WanModel.forward time embeddings: sinusoidal_embedding_1d(freq_dim, t) in float64 per token, then
    time_embedding (Linear, SiLU, Linear) and time_projection (SiLU, Linear to 6 x dim), in fp32."""
    b, s = t.shape
    half = emb1_weight.shape[1] // 2
    pos = t.to(torch.float64).flatten()
    sinusoid = torch.outer(pos, torch.pow(10000, -torch.arange(half, dtype=torch.float64, device=t.device).div(half)))
    x = torch.cat((torch.cos(sinusoid), torch.sin(sinusoid)), dim=1).to(emb1_weight.dtype)
    e = F.linear(F.silu(F.linear(x, emb1_weight, emb1_bias)), emb2_weight, emb2_bias)
    e0 = F.linear(F.silu(e), proj_weight, proj_bias)
    return e.view(b, s, -1), e0.view(b, s, 6, -1)
'''


def _ti2v_workloads():
    """(batch, latent frames, rows, cols): 1280x704 (latents 44x80 / vae_stride 16, 2x2 patches: 22x40), 121 frames
    -> 31 latent frames, shorter clips and portrait; batch 2 where cond and uncond run together."""
    rows = ((1, 31, 22, 40), (1, 1, 22, 40), (1, 5, 22, 40), (1, 9, 22, 40), (1, 13, 22, 40), (1, 17, 22, 40),
            (1, 21, 22, 40), (1, 25, 22, 40), (1, 31, 40, 22), (2, 31, 22, 40), (2, 13, 22, 40), (2, 21, 22, 40),
            (1, 31, 16, 28), (1, 21, 40, 22), (2, 5, 22, 40), (2, 25, 22, 40))
    return [{"batch_size": b, "frames": t, "height": h, "width": w} for b, t, h, w in rows]


def wan22_ti2v_time_embedding(m) -> ProblemDraft:
    d, freq = m.config["dim"], m.config["freq_dim"]
    f = "float32"
    return _tiers(draft(
        m, f"{slug(m)}_per_token_time_embedding_d{d}", "timestep_embedding",
        f"{m.name} timestep embedding per token (WanModel.forward, wan/modules/model.py): TI2V conditions on the "
        "first frame by giving its tokens timestep 0, so t is [B, seq_len]; sinusoidal_embedding_1d(freq_dim "
        f"{freq}, t) in float64, time_embedding Linear({freq} -> dim {d}) + SiLU + Linear({d} -> {d}) and "
        f"time_projection SiLU + Linear({d} -> 6 x {d}), all in fp32 (autocast float32): returns e [B, L, {d}] "
        f"(for the head) and e0 [B, L, 6, {d}] (every block's modulation). Tokens: latent frames x (H/32) x (W/32) "
        f"(vae_stride {m.config['vae_stride']}, patch_size {m.config['patch_size']}); frame_num "
        f"{m.config['frame_num']} -> 31 latent frames at 1280x704.",
        {"batch_size": (None, "videos"), "frames": (None, "latent frames"), "height": (None, "patch rows"),
         "width": (None, "patch columns"), "num_tokens": ("frames * height * width", "video tokens"),
         "freq_dim": (freq, "freq_dim"), "dim": (d, "dim"), "six_dim": (6 * d, "6 x dim"), "six": (6, "modulation rows")},
        {"t": (["batch_size", "num_tokens"], f, "_ti2v_timesteps(a, device)"),
         "emb1_weight": (["dim", "freq_dim"], f, freq ** -0.5), "emb1_bias": (["dim"], f, 0.1),
         "emb2_weight": (["dim", "dim"], f, d ** -0.5), "emb2_bias": (["dim"], f, 0.1),
         "proj_weight": (["six_dim", "dim"], f, d ** -0.5), "proj_bias": (["six_dim"], f, 0.1)},
        {"e": (["batch_size", "num_tokens", "dim"], f), "e0": (["batch_size", "num_tokens", "six", "dim"], f)},
        _body(_WAN_TIME), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), frames=(1, 2, 1, 3, 2, 1, 4, 2),
                               height=(2, 2, 4, 2, 4, 3, 3, 4), width=(2, 4, 4, 3, 4, 3, 4, 6))),
        "L2", (), "wan_time_embedding", _ti2v_workloads())


_WAN_VAE_BLOCK = '''def _rms_silu(z, gamma):
    """RMS_norm(images=False): F.normalize over channels x sqrt(C) x gamma (bias 0), then SiLU."""
    zf = z.to(_acc(z))
    return F.silu(F.normalize(zf, dim=1) * (z.shape[1] ** 0.5) * gamma.to(zf.dtype)[:, None, None, None]).to(z.dtype)


def _causal_conv(z, cache, weight, bias):
    """CausalConv3d(k=3, padding=1) on a chunk with the previous chunks' last 2 input frames prepended."""
    return F.conv3d(F.pad(torch.cat((cache, z), dim=2), (1, 1, 1, 1, 0, 0)), weight, bias)


@torch.no_grad()
def run(x, cache1, cache2, gamma1, conv1_weight, conv1_bias, gamma2, conv2_weight, conv2_bias):
    """ResidualBlock.forward with feat_cache: returns the block output and the two convs' updated caches."""
    a1 = _rms_silu(x, gamma1)
    h = _causal_conv(a1, cache1, conv1_weight, conv1_bias)
    a2 = _rms_silu(h, gamma2)
    h = _causal_conv(a2, cache2, conv2_weight, conv2_bias)
    new1 = torch.cat((cache1, a1), dim=2)[:, :, -2:]
    new2 = torch.cat((cache2, a2), dim=2)[:, :, -2:]
    return x + h, new1, new2
'''


def wan22_vae_resblock(m) -> ProblemDraft:
    c = 1024  # Decoder3d dims[0] = dec_dim 256 x dim_mult[-1] 4 (vae2_2.py WanVAE_), the middle blocks' width
    f = "float32"
    fan = 27 * c
    # decoding runs one latent frame per chunk at the middle blocks; 1280x704: latents 44x80 (vae_stride 16)
    rows = ((1, 44, 80), (1, 80, 44), (1, 30, 52), (1, 52, 30), (2, 44, 80), (1, 32, 32), (1, 40, 72), (2, 30, 52),
            (1, 48, 48), (4, 44, 80), (1, 36, 64), (2, 40, 72), (4, 30, 52), (1, 60, 104), (2, 60, 104), (1, 24, 40))
    gpu = [{"batch_size": b, "chunk_frames": 1, "height": h, "width": w} for b, h, w in rows]
    return _tiers(draft(
        m, f"{slug(m)}_vae_causal_resblock_c{c}", "vae_resblock",
        f"{m.name} VAE decoder middle ResidualBlock (wan/modules/vae2_2.py; Wan2_2_VAE z_dim 48, dec_dim 256 x "
        f"dim_mult[-1] 4 = {c} channels; vae_stride {m.config['vae_stride']}) on one chunk of the chunked causal "
        "decode: RMS_norm (F.normalize over channels x sqrt(C) x gamma) + SiLU + CausalConv3d 3x3x3, twice, "
        "identity shortcut; each CausalConv3d prepends its feat_cache (the last 2 frames of its input from the "
        "previous chunks, zeros before the first) instead of zero padding in time. Returns the block output and "
        "the two updated caches. fp32 (the VAE's dtype).",
        {"batch_size": (None, "videos"), "chunk_frames": (None, "latent frames in the chunk"),
         "height": (None, "latent rows"), "width": (None, "latent columns"), "channels": (c, "dec_dim x 4"),
         "two": (2, "CACHE_T"), "three": (3, "kernel")},
        {"x": (["batch_size", "channels", "chunk_frames", "height", "width"], f, 1.0),
         "cache1": (["batch_size", "channels", "two", "height", "width"], f, 0.5),
         "cache2": (["batch_size", "channels", "two", "height", "width"], f, 0.5),
         "gamma1": (["channels"], f, 0.1, 1.0),
         "conv1_weight": (["channels", "channels", "three", "three", "three"], f, fan ** -0.5),
         "conv1_bias": (["channels"], f, 0.1), "gamma2": (["channels"], f, 0.1, 1.0),
         "conv2_weight": (["channels", "channels", "three", "three", "three"], f, fan ** -0.5),
         "conv2_bias": (["channels"], f, 0.1)},
        {"output": (["batch_size", "channels", "chunk_frames", "height", "width"], f),
         "new_cache1": (["batch_size", "channels", "two", "height", "width"], f),
         "new_cache2": (["batch_size", "channels", "two", "height", "width"], f)},
        _body(_WAN_VAE_BLOCK), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), chunk_frames=(1, 1, 1, 2, 1, 1, 2, 1),
                                    height=(2, 3, 2, 3, 4, 3, 4, 5), width=(2, 4, 3, 3, 4, 4, 5, 6))),
        "L2", (), "wan_vae_resblock", gpu)


_WAN_VAE_CONV = '''@torch.no_grad()
def run(x, cache, weight, bias):
    """CausalConv3d(k=3, padding=1).forward(x, cache_x): the cache replaces the 2 frames of causal zero padding."""
    out = F.conv3d(F.pad(torch.cat((cache, x), dim=2), (1, 1, 1, 1, 0, 0)), weight, bias)
    return out, torch.cat((cache, x), dim=2)[:, :, -2:]
'''


def wan22_vae_causal_conv(m) -> ProblemDraft:
    c = 256  # dec_dim of Wan2_2_VAE: the last up-block's width, at H/2 x W/2 before unpatchify
    f = "float32"
    # chunks of 4 frames (one latent frame after the 4x temporal upsampling; the first chunk has 1)
    rows = ((1, 4, 352, 640), (1, 1, 352, 640), (1, 4, 640, 352), (1, 4, 240, 416), (1, 1, 240, 416),
            (1, 4, 176, 320), (2, 4, 240, 416), (1, 4, 256, 256), (1, 4, 288, 512), (2, 4, 352, 640),
            (1, 4, 320, 576), (2, 1, 352, 640), (1, 4, 384, 384), (2, 4, 176, 320), (1, 1, 640, 352),
            (1, 4, 416, 240))
    gpu = [{"batch_size": b, "chunk_frames": t, "height": h, "width": w} for b, t, h, w in rows]
    return _tiers(draft(
        m, f"{slug(m)}_vae_causal_conv3d_k3_c{c}", "conv3d",
        f"{m.name} VAE decoder CausalConv3d 3x3x3 of the last up-block ({c} channels = dec_dim 256 of Wan2_2_VAE, "
        "wan/modules/vae2_2.py) on one decode chunk: the cache (the last 2 input frames of the previous chunk, "
        "zeros at the start) is prepended in time instead of causal zero padding, spatial zero padding 1; returns "
        "the conv output and the updated cache. fp32. The 256-channel stage runs at H/2 x W/2 (the output is "
        f"unpatchified 2x2): 352x640 for 1280x704 video (vae_stride {m.config['vae_stride']}).",
        {"batch_size": (None, "videos"), "chunk_frames": (None, "frames in the chunk"), "height": (None, "rows"),
         "width": (None, "columns"), "channels": (c, "dec_dim"), "two": (2, "CACHE_T"), "three": (3, "kernel")},
        {"x": (["batch_size", "channels", "chunk_frames", "height", "width"], f, 1.0),
         "cache": (["batch_size", "channels", "two", "height", "width"], f, 1.0),
         "weight": (["channels", "channels", "three", "three", "three"], f, (27 * c) ** -0.5),
         "bias": (["channels"], f, 0.1)},
        {"output": (["batch_size", "channels", "chunk_frames", "height", "width"], f),
         "new_cache": (["batch_size", "channels", "two", "height", "width"], f)},
        _body(_WAN_VAE_CONV), grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 1), chunk_frames=(1, 4, 1, 2, 1, 4, 2, 1),
                                   height=(2, 3, 2, 3, 4, 3, 6, 8), width=(2, 4, 3, 3, 4, 4, 6, 8))),
        "L1", (), "causal_conv3d", gpu)


# --- the set -----------------------------------------------------------------------------------------------

def drafts() -> list[ProblemDraft]:
    return [
        # FLUX.1-schnell
        flux_rope(FLUX_SCHNELL), flux_double_stream(FLUX_SCHNELL), flux_single_stream(FLUX_SCHNELL),
        # Hunyuan-DiT
        hunyuan_skip_self_attention(HUNYUAN_DIT), hunyuan_cross_attention(HUNYUAN_DIT),
        # Sana
        sana_linear_attention(SANA_1600M), sana_glumbconv(SANA_1600M), sana_linear_attention_backward(SANA_1600M),
        # SDXL, SD 2.1
        sdxl_spatial_transformer(SDXL_UNET), sdxl_geglu(SDXL_UNET),
        sd21_spatial_transformer(SD21_UNET), sd21_resblock(SD21_UNET),
        # Stable Video Diffusion
        svd_temporal_block(SVD), svd_video_resblock(SVD),
        # Mochi
        mochi_joint_attention(MOCHI), mochi_gated_residual(MOCHI),
        # CogVideoX
        cogvideox_expert_adaln(COGVIDEOX_2B), cogvideox_expert_adaln_backward(COGVIDEOX_2B),
        cogvideox_attention(COGVIDEOX_5B), cogvideox15_patch_embed(COGVIDEOX15_5B),
        # Wan2.2
        wan22_a14b_self_attention(WAN22_A14B), wan22_ti2v_time_embedding(WAN22_TI2V_5B),
        wan22_vae_resblock(WAN22_TI2V_5B), wan22_vae_causal_conv(WAN22_TI2V_5B),
    ]
