"""Real profiles of tiny models: a one-layer decoder from a published record, a small DLRM, a user's module."""

import json

import pytest

from solbench.reach import ModelRequest, ReachOptions, run_reach
from solbench.reach.errors import ReachError

TINY_DECODER = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "vocab_size": 256,
}
TINY_DLRM = {
    "embedding_dim": 16,
    "dense_arch_layer_sizes": [32, 16],
    "over_arch_layer_sizes": [32, 1],
    "dcn_low_rank_dim": 8,
}
FAST = ReachOptions(steps=2, warmup=1)

pytestmark = pytest.mark.slow


def _classes(report):
    return {c.cls: c for c in report.classes}


LLAMA_3_2_1B = {
    "name": "Llama-3.2-1B",
    "domain": "language",
    "model_type": "llama",
    "attention_bias": False,
    "head_dim": 64,
    "hidden_act": "silu",
    "hidden_size": 2048,
    "intermediate_size": 8192,
    "max_position_embeddings": 131072,
    "num_attention_heads": 32,
    "num_hidden_layers": 16,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05,
    "rope_theta": 500000.0,
    "vocab_size": 128256,
    "tie_word_embeddings": True,
}
"""The published record's values (as in model-configs.json), so the test needs no file outside the repository."""


def test_a_depth_scaled_decoder_is_profiled_and_says_how_it_was_scaled(tmp_path):
    configs = tmp_path / "configs.json"
    configs.write_text(json.dumps({"models": [LLAMA_3_2_1B]}))
    request = ModelRequest("Llama-3.2-1B", batch=1, seq=32, layers=1, overrides=TINY_DECODER, configs=configs)
    (tmp_path / "suite").mkdir()
    report = run_reach(request, ReachOptions(steps=2, warmup=1, problems=tmp_path / "suite"))
    classes = _classes(report)
    assert report.config["num_hidden_layers"] == 1 and report.steps == 2
    assert any("1 of 16 decoder layers" in note for note in report.scaling)
    assert classes["gemm"].ms > 0 and classes["attention"].ms > 0 and classes["addressable"].ms > 0
    assert sum(c.share for c in report.classes) == pytest.approx(1.0, abs=1e-6)
    assert 0 < report.addressable_fraction < 1
    assert report.addressable_fraction + report.vendor_fraction <= 1 + 1e-9
    full = report.full_depth  # 16 layers' worth of layer time: a larger step, the layers weigh more
    assert full.layers_kept == 1 and full.layers_published == 16 and full.step_ms > report.step_ms
    assert sum(full.shares.values()) == pytest.approx(1.0, abs=1e-6)
    families = {row.family for row in report.ops if row.cls == "addressable"}
    assert {"rmsnorm", "activation", "rope"} <= families
    # an empty suite covers nothing and says which families are uncovered
    assert report.problems == [] and report.problem_weights == {}
    assert {u.family for u in report.uncovered} >= {"rmsnorm", "rope"}


def test_dlrm_training_maps_embedding_time_to_the_suite_and_projects(tmp_path):
    folder = tmp_path / "DLRM" / "bags"  # a problem of this model, at the (overridden) embedding dim
    folder.mkdir(parents=True)
    (folder / "definition.json").write_text(
        json.dumps(
            {
                "name": "bags",
                "op_type": "embedding_bag",
                "tags": ["set:DLRM", "model:dlrm-dcnv2"],
                "axes": {"dim": {"type": "const", "value": 16}},
            }
        )
    )
    request = ModelRequest("dlrm-dcnv2", mode="training", batch=64, max_rows=1000, overrides=TINY_DLRM)
    report = run_reach(request, ReachOptions(steps=2, warmup=1, problems=tmp_path, assume_speedup=2.0))
    assert any("capped at 1,000" in note for note in report.scaling) and report.full_depth is None
    families = {(row.family, row.pass_) for row in report.ops if row.cls == "addressable"}
    assert ("embedding_bag", "forward") in families and ("optimizer", "optimizer") in families
    assert [p.problem for p in report.problems] == ["bags"] and report.problems[0].match == "model"
    assert 0 < report.problem_weights["bags"] < 1
    projection = report.projection
    expected = 1 / (1 - report.problems[0].share_of_step / 2) - 1  # Amdahl at 2x on the covered share
    assert projection.gain == pytest.approx(expected, rel=0.2) and projection.low <= projection.high


def test_a_users_module_from_a_factory(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(
        "import torch\n\ndef make():\n"
        "    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.LayerNorm(32), torch.nn.GELU())\n"
        "    return model, (torch.randn(16, 32),)\n"
    )
    report = run_reach(
        ModelRequest(f"module:{path}:make", mode="training"), ReachOptions(steps=2, warmup=1, problems=tmp_path)
    )
    assert report.kind == "module" and report.model == "mine:make"
    assert {row.family for row in report.ops if row.cls == "addressable"} >= {"layernorm"}
    with pytest.raises(ReachError, match="no function 'absent'"):
        run_reach(ModelRequest(f"module:{path}:absent"), FAST)


def test_unknown_models_and_bad_options_are_reach_errors(tmp_path):
    configs = tmp_path / "configs.json"
    configs.write_text(json.dumps({"models": [LLAMA_3_2_1B]}))
    with pytest.raises(ReachError, match="unknown model 'Llama-3.2-1' .* did you mean Llama-3.2-1B"):
        run_reach(ModelRequest("Llama-3.2-1", configs=configs), ReachOptions(problems=tmp_path))
    with pytest.raises(ReachError, match="--mode"):
        run_reach(ModelRequest("dlrm", mode="serving"), ReachOptions(problems=tmp_path))
    with pytest.raises(ReachError, match="module:PATH.py:FACTORY"):
        run_reach(ModelRequest("module:nothing"), ReachOptions(problems=tmp_path))
