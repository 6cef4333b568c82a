"""The language-model breadth problems follow the models' code: their RoPE frequencies, Cohere's parallel
layer, Llama-4's RoPE + QK L2-norm and the sigmoid group routers are compared with transformers' own
functions on small inputs; and every assigned model has a problem."""

import types

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from .suite_folders import made_by, named  # noqa: E402

LLAMA4_ROPE = "llama-4-scout-17b-16e-instruct_rope_qk_l2norm_h40_kv8_d128"


def _reference(name: str) -> dict:
    ns: dict = {}
    exec(named(name).reference, ns)
    return ns


def _helpers() -> dict:
    """The RoPE helpers every reference of the family carries (``_llama3_inv_freq``, ``_yarn_inv_freq`` ...)."""
    return _reference("qwen2-5-14b_gqa_prefill_h40kv8_d128")


@pytest.mark.slow
def test_rope_frequencies_match_transformers():
    from transformers import DeepseekV3Config, LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    ns = _helpers()
    for factor, low, high in ((8.0, 1.0, 4.0), (16.0, 1.0, 1.0)):  # Llama-3.1-405B, Llama-4-Scout
        config = LlamaConfig(
            hidden_size=256,
            num_attention_heads=2,
            head_dim=128,
            rope_theta=500000.0,
            max_position_embeddings=131072,
            rope_scaling={
                "rope_type": "llama3",
                "factor": factor,
                "low_freq_factor": low,
                "high_freq_factor": high,
                "original_max_position_embeddings": 8192,
            },
        )
        expected, _ = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
        ours = ns["_llama3_inv_freq"](128, 500000.0, factor, low, high, 8192, "cpu")
        torch.testing.assert_close(ours.float(), expected, rtol=1e-6, atol=0)
    config = DeepseekV3Config(
        rope_theta=10000,
        max_position_embeddings=163840,
        rope_scaling={
            "type": "yarn",
            "factor": 40,
            "beta_fast": 32,
            "beta_slow": 1,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
            "original_max_position_embeddings": 4096,
        },
    )
    expected, attention_factor = ROPE_INIT_FUNCTIONS["yarn"](config, "cpu")
    assert attention_factor == pytest.approx(1.0)  # mscale / mscale_all_dim: cos and sin are not rescaled
    ours = ns["_yarn_inv_freq"](64, 10000.0, 40.0, 32.0, 1.0, 4096, "cpu")
    torch.testing.assert_close(ours.float(), expected, rtol=1e-6, atol=0)


@pytest.mark.slow
def test_command_r_parallel_block_is_coheres_decoder_layer():
    from transformers import CohereConfig
    from transformers.models.cohere.modeling_cohere import CohereDecoderLayer, CohereRotaryEmbedding

    torch.manual_seed(0)
    config = CohereConfig(
        hidden_size=256,
        intermediate_size=96,
        num_attention_heads=2,
        num_key_value_heads=2,
        rope_theta=8000000.0,
        layer_norm_eps=1e-05,
        max_position_embeddings=64,
    )
    config._attn_implementation = "sdpa"
    layer = CohereDecoderLayer(config, 0).double().eval()
    for p in layer.parameters():
        p.data.normal_(0, 0.1)
    x = torch.randn(2, 9, 256, dtype=torch.float64)
    position_embeddings = CohereRotaryEmbedding(config)(x, torch.arange(9)[None].expand(2, 9))
    with torch.no_grad():
        out = layer(x, attention_mask=None, position_embeddings=position_embeddings)
    out = out[0] if isinstance(out, tuple) else out
    attn, mlp = layer.self_attn, layer.mlp
    run = _reference("command-r-v01_parallel_block_tp8_h8_d128")["run"]
    ours = run(
        x,
        layer.input_layernorm.weight,
        attn.q_proj.weight,
        attn.k_proj.weight,
        attn.v_proj.weight,
        attn.o_proj.weight,
        mlp.gate_proj.weight,
        mlp.up_proj.weight,
        mlp.down_proj.weight,
    )
    # transformers forms the angles in fp32; the residual is added after the all-reduce, so not here
    torch.testing.assert_close(ours, out - x, rtol=1e-5, atol=1e-6)


def test_llama4_rope_and_qk_l2norm_match_transformers():
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.llama4.modeling_llama4 import Llama4TextL2Norm, apply_rotary_emb

    torch.manual_seed(0)
    c = named(LLAMA4_ROPE).model.config
    config = LlamaConfig(
        hidden_size=256,
        num_attention_heads=2,
        head_dim=128,
        rope_theta=c["rope_theta"],
        max_position_embeddings=10485760,
        rope_scaling={
            "rope_type": "llama3",
            "factor": c["rope_scaling.factor"],
            "low_freq_factor": 1.0,
            "high_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
        },
    )
    inv_freq, _ = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    positions = torch.randint(0, 4000, (7,))  # fp32 inverse frequencies: angles agree to ~1e-4 here
    freqs_cis = torch.polar(torch.ones(7, 64, dtype=torch.float64), positions.double()[:, None] * inv_freq.double())
    q, k = torch.randn(7, 40, 128, dtype=torch.float64), torch.randn(7, 8, 128, dtype=torch.float64)
    eq, ek = apply_rotary_emb(q[None], k[None], freqs_cis[None])
    norm = Llama4TextL2Norm(c["rms_norm_eps"])
    run = _reference(LLAMA4_ROPE)["run"]
    oq, ok = run(q, k, positions)
    torch.testing.assert_close(oq, norm(eq[0]), rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(ok, norm(ek[0]), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    "name,experts,groups,topk_group",
    [("glm-4-7_router_sigmoid_noaux_top8_e160", 160, 1, 1), ("deepseek-v3-2_router_group_top8_e256_g8", 256, 8, 4)],
)
def test_sigmoid_routers_match_glm4_moe_router(name, experts, groups, topk_group):
    from transformers.models.glm4_moe.modeling_glm4_moe import Glm4MoeTopkRouter

    torch.manual_seed(0)
    config = types.SimpleNamespace(
        num_experts_per_tok=8,
        num_local_experts=experts,
        hidden_size=64,
        routed_scaling_factor=2.5,
        n_group=groups,
        topk_group=topk_group,
        norm_topk_prob=True,
    )
    router = Glm4MoeTopkRouter(config)
    router.weight.data.normal_(0, 0.125)
    router.e_score_correction_bias.data.normal_(0, 0.05)
    x = torch.randn(33, 64)
    with torch.no_grad():
        logits, weights, indices = router(x)
    expected = torch.zeros(33, experts).scatter(1, indices, weights)
    dense, ours_logits = _reference(name)["run"](x, router.weight.data, router.e_score_correction_bias)
    torch.testing.assert_close(ours_logits, logits)
    torch.testing.assert_close(dense, expected, rtol=1e-5, atol=1e-6)


def test_every_assigned_model_has_a_problem_and_the_family_targets_hold():
    drafts = made_by("llm_breadth")
    models = {d.model.name for d in drafts}
    assert len(models) == 23
    families = [t for d in drafts for t in d.extra_tags if t.startswith("family:")]
    assert families.count("family:attention") >= 18 and families.count("family:moe") >= 12
    assert families.count("family:mla") >= 5 and families.count("family:rope_kv") >= 5
    assert sum(d.set == "L1" for d in drafts) >= 12 and sum(d.set == "L2" for d in drafts) >= 14
    for d in drafts:
        assert len(d.workloads) >= 16 and len(d.cpu_workloads) >= 8, d.name
