"""Vision-language, vision and speech towers: coverage of their models, and references against the models' code.

Each reference that follows a function of transformers is run on small inputs and compared with it
(float32, the models' own working precision), so a reference that drifts from the model fails here
rather than in a user's run; a function transformers moved fails naming the versions
(tests/library_internals.py) instead of skipping.
"""

from collections import Counter

import pytest

from library_internals import library_module
from solbench.suite.extract.extractor import load_reference

from .suite_folders import made_by

torch = pytest.importorskip("torch")
F = torch.nn.functional

MODELS = {
    "InternVL3.5-8B",
    "Llama-3.2-11B-Vision-Instruct",
    "LLaVA-1.5-7B (mlc-llm preset llava)",
    "Phi-3.5-vision-instruct",
    "Pixtral-12B-2409",
    "Qwen2-VL-7B-Instruct",
    "Qwen2.5-VL-3B-Instruct",
    "Qwen3-VL-235B-A22B-Instruct",
    "Qwen3-VL-30B-A3B-Instruct",
    "Qwen3-VL-8B-Instruct",
    "DINOv2 ViT-g/14",
    "DINOv2 ViT-S/14",
    "OpenCLIP ViT-H/14",
    "SAM ViT-H image encoder",
    "SAM ViT-L image encoder",
    "SigLIP so400m/14 @384",
    "ViT-H/14",
    "EnCodec 24 kHz",
    "FastConformer Large (~120M) encoder",
    "HuBERT Large (LL-60k)",
    "HuBERT X-Large (LL-60k)",
    "wav2vec 2.0 Large LV-60 self-training (960h)",
    "Whisper medium",
    "dlrm_criteo_kaggle (facebookresearch/dlrm benchmark)",
}


def _drafts():
    """The problems the vision_language, speech and dlrm_kaggle recipes made (their folders are the source now)."""
    return made_by("vision_language", "speech", "dlrm_kaggle")


def _module(prefix: str):
    (draft,) = [d for d in _drafts() if d.name.startswith(prefix)]
    return load_reference(draft.reference)


def _close(a, b, tol=1e-5):
    assert a.shape == b.shape, (a.shape, b.shape)
    a, b = a.detach().double(), b.detach().double()
    assert torch.allclose(a, b, atol=tol, rtol=tol), float((a - b).abs().max())


def test_every_model_has_a_problem_and_the_families_and_tiers_hold():
    drafts = _drafts()
    assert {d.model.name for d in drafts} == MODELS
    sets = Counter(d.set for d in drafts)
    assert sets["L1"] >= 10 and sets["L2"] >= 10 and sets["DLRM"] == 1, sets
    tags = Counter(t for d in drafts for t in d.extra_tags)
    assert tags["family:attention"] >= 14 and tags["family:rope_kv"] >= 4, tags
    assert all(d.set in ("L1", "L2") and d.op_type.endswith("_backward") for d in drafts if d.backward)
    assert all(len(d.workloads) >= 16 and len(d.cpu_workloads or []) >= 8 for d in drafts)


@pytest.mark.slow
def test_qwen25_vl_window_index_matches_transformers():
    vision_utils = library_module("transformers.vision_utils")
    ns = _module("qwen2-5-vl-3b-instruct_vision_window_attention")
    grid = torch.tensor([[1, 8, 12], [1, 6, 4], [1, 16, 16]])
    index, cu = ns["_window_index"](grid, 2, 4)
    index_hf, cu_hf = vision_utils.get_vision_window_index(grid, 2, 112, 14)
    assert torch.equal(index, index_hf.long())
    assert cu.tolist() == torch.unique_consecutive(torch.as_tensor(cu_hf)).tolist()


@pytest.mark.slow
def test_qwen25_vl_mrope_matches_transformers():
    q25 = library_module("transformers.models.qwen2_5_vl.modeling_qwen2_5_vl")
    from transformers.models.qwen2_5_vl.configuration_qwen2_5_vl import Qwen2_5_VLTextConfig

    ns = _module("qwen2-5-vl-3b-instruct_mrope")
    config = Qwen2_5_VLTextConfig(
        hidden_size=2048,
        num_attention_heads=16,
        num_key_value_heads=2,
        rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]},
    )
    torch.manual_seed(0)
    q, k = torch.randn(2, 4, 40, 128), torch.randn(2, 2, 40, 128)
    positions = ns["_mrope_positions"](2, 40, "cpu")
    cos, sin = q25.Qwen2_5_VLRotaryEmbedding(config)(q, positions)
    q_hf, k_hf = q25.apply_rotary_pos_emb(q, k, cos, sin)
    q_ref, k_ref = ns["run"](q, k, positions)
    _close(q_ref, q_hf)
    _close(k_ref, k_hf)


@pytest.mark.slow
def test_qwen3_vl_qknorm_interleaved_mrope_matches_transformers():
    q3 = library_module("transformers.models.qwen3_vl.modeling_qwen3_vl")
    from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig

    ns = _module("qwen3-vl-235b-a22b-instruct_qknorm_interleaved_mrope")
    config = Qwen3VLTextConfig(
        hidden_size=256,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=128,
        rope_parameters={"rope_type": "default", "rope_theta": 5e6},
    )
    torch.manual_seed(0)
    q, k = torch.randn(1, 30, 4, 128), torch.randn(1, 30, 2, 128)
    wq, wk = torch.rand(128) + 0.5, torch.rand(128) + 0.5
    positions = ns["_mrope_positions"](1, 30, "cpu")
    q_norm, k_norm = q3.Qwen3VLTextRMSNorm(128, eps=1e-6), q3.Qwen3VLTextRMSNorm(128, eps=1e-6)
    q_norm.weight.data, k_norm.weight.data = wq, wk
    cos, sin = q3.Qwen3VLTextRotaryEmbedding(config)(q, positions)
    q_hf, k_hf = q3.apply_rotary_pos_emb(q_norm(q).transpose(1, 2), k_norm(k).transpose(1, 2), cos, sin)
    q_ref, k_ref = ns["run"](q, k, wq, wk, positions)
    _close(q_ref.transpose(1, 2), q_hf)
    _close(k_ref.transpose(1, 2), k_hf)


@pytest.mark.slow
def test_pixtral_rope_matches_transformers():
    px = library_module("transformers.models.pixtral.modeling_pixtral")
    from transformers.models.pixtral.configuration_pixtral import PixtralVisionConfig

    ns = _module("pixtral-12b-2409_vision_rope_2d")
    config = PixtralVisionConfig(
        hidden_size=1024,
        num_attention_heads=16,
        head_dim=64,
        image_size=1024,
        patch_size=16,
        rope_parameters={"rope_type": "axial", "rope_theta": 10000.0},
    )
    grid = torch.tensor([[1, 4, 6], [1, 3, 2]])
    position_ids = torch.cat(
        [
            torch.stack(torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij"), -1).reshape(-1, 2)
            for _, h, w in grid.tolist()
        ]
    )
    torch.manual_seed(0)
    q, k = torch.randn(30, 16, 64), torch.randn(30, 16, 64)
    cos, sin = px.PixtralVisionRotaryEmbedding(config)(q, position_ids)
    q_hf, k_hf = px.apply_rotary_pos_emb(q.transpose(0, 1)[None], k.transpose(0, 1)[None], cos[None], sin[None])
    q_ref, k_ref = ns["run"](q, k, grid)
    _close(q_ref.transpose(0, 1)[None], q_hf)
    _close(k_ref.transpose(0, 1)[None], k_hf)


@pytest.mark.slow
def test_mllama_position_embedding_and_tile_mask_match_transformers():
    ml = library_module("transformers.models.mllama.modeling_mllama")
    from transformers.models.mllama.configuration_mllama import MllamaVisionConfig

    config = MllamaVisionConfig(hidden_size=16, image_size=28, patch_size=14, max_num_tiles=4, num_attention_heads=4)
    assert config.max_aspect_ratio_id == 8
    module = ml.MllamaPrecomputedPositionEmbedding(config)
    torch.manual_seed(0)
    module.gate.data = torch.tensor([0.7])
    x, ids = torch.randn(3, 4, 5, 16), torch.tensor([1, 5, 8])
    run = _module("llama-3-2-11b-vision-instruct_vision_tile_position_embedding")["run"]
    _close(run(x, ids, module.embedding, module.tile_embedding.weight, module.gate), module(x, ids))
    # the gated tile attention's mask: the reference builds _prepare_aspect_ratio_attention_mask
    ns = _module("llama-3-2-11b-vision-instruct_vision_gated_tile_attention")
    b, padded, d = 2, 8, 16
    hidden = torch.randn(b, 4, padded, d)
    ratio_mask = torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0]])
    ln_w, ln_b = torch.rand(d) + 0.5, torch.randn(d) * 0.1
    wq, wk, wv, wo = (torch.randn(d, d) / 4 for _ in range(4))
    gate = torch.tensor([0.4])
    out = ns["run"](hidden, ratio_mask, torch.tensor([5]), ln_w, ln_b, wq, wk, wv, wo, gate)
    mask = ml._prepare_aspect_ratio_attention_mask(ratio_mask, 5, padded, torch.float32)
    x = hidden.reshape(b, -1, d)
    h = F.layer_norm(x, (d,), ln_w, ln_b, 1e-05)
    q, k, v = (F.linear(h, w).view(b, -1, 16, 1).transpose(1, 2) for w in (wq, wk, wv))
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(b, -1, d)
    _close(out, (x + gate.tanh() * F.linear(o, wo)).view(b, 4, padded, d))


@pytest.mark.slow
def test_siglip_map_head_matches_transformers():
    sg = library_module("transformers.models.siglip.modeling_siglip")
    from transformers.models.siglip.configuration_siglip import SiglipVisionConfig

    config = SiglipVisionConfig(
        hidden_size=32,
        intermediate_size=48,
        num_attention_heads=16,
        layer_norm_eps=1e-6,
        hidden_act="gelu_pytorch_tanh",
    )
    torch.manual_seed(0)
    head = sg.SiglipMultiheadAttentionPoolingHead(config).eval()
    x = torch.randn(3, 9, 32)
    run = _module("siglip-so400m-14-384_map_pooling_head")["run"]
    out = run(
        x,
        head.probe.view(-1),
        head.attention.in_proj_weight,
        head.attention.in_proj_bias,
        head.attention.out_proj.weight,
        head.attention.out_proj.bias,
        head.layernorm.weight,
        head.layernorm.bias,
        head.mlp.fc1.weight,
        head.mlp.fc1.bias,
        head.mlp.fc2.weight,
        head.mlp.fc2.bias,
    )
    with torch.no_grad():
        _close(out, head(x))


@pytest.mark.slow
def test_wav2vec2_pos_conv_and_hubert_feature_encoder_match_transformers():
    w2v = library_module("transformers.models.wav2vec2.modeling_wav2vec2")
    hubert = library_module("transformers.models.hubert.modeling_hubert")
    from transformers import HubertConfig, Wav2Vec2Config

    torch.manual_seed(0)
    conv = w2v.Wav2Vec2PositionalConvEmbedding(
        Wav2Vec2Config(hidden_size=64, num_conv_pos_embeddings=128, num_conv_pos_embedding_groups=16)
    ).eval()
    x = torch.randn(2, 150, 64)
    g = conv.conv.parametrizations.weight.original0.detach()
    v = conv.conv.parametrizations.weight.original1.detach()
    run = _module("wav2vec-2-0-large-lv-60-self-training_pos_conv_embedding")["run"]
    with torch.no_grad():
        _close(run(x, v, g, conv.conv.bias), x + conv(x))

    config = HubertConfig(
        feat_extract_norm="layer",
        conv_dim=(8,) * 7,
        conv_kernel=(10, 3, 3, 3, 3, 2, 2),
        conv_stride=(5, 2, 2, 2, 2, 2, 2),
        conv_bias=True,
    )
    encoder = hubert.HubertFeatureEncoder(config).eval()
    wave = torch.randn(2, 1600)
    params = []
    for layer in encoder.conv_layers:
        params += [layer.conv.weight, layer.conv.bias, layer.layer_norm.weight, layer.layer_norm.bias]
    run = _module("hubert-large_conv_feature_encoder")["run"]
    with torch.no_grad():
        _close(run(wave, *params), encoder(wave), tol=1e-4)


@pytest.mark.slow
def test_encodec_codes_are_margin_separated():
    """The generated encoder outputs decode to the planted codes, and a float64 run gives the same codes."""
    ns = _module("encodec-24-khz_rvq_encode")
    torch.manual_seed(0)
    axes = {"num_quantizers": 32, "codebook_size": 1024, "dim": 128, "batch_size": 2, "num_frames": 40}
    out = {}
    x = ns["_rvq_example"](axes, out, "cpu")
    codes = ns["run"](x, out["_codebooks"])
    assert torch.equal(codes, ns["run"](x.double(), out["_codebooks"].double()))
    assert codes.shape == (32, 2, 40)
