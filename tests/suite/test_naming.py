"""suite.naming: one rule for every recipe and extracted problem's name."""

import json
from pathlib import Path

import pytest

from solbench.suite.naming import follows_rule, model_slug, problem_name

SUITE = Path(__file__).resolve().parents[2] / "problems"


def test_model_slugs_keep_every_word_and_drop_parentheticals():
    assert model_slug("Llama-3.1-8B") == "llama-3-1-8b"
    assert model_slug("SDXL VAE (AutoencoderKL)") == "sdxl-vae"
    assert model_slug("ViT-L/16") == "vit-l-16"


def test_a_proposed_name_gets_the_model_slug_in_place_of_its_own_spelling():
    assert problem_name("llama31_8b_nvfp4_gemm_k_proj", "Llama-3.1-8B") == "llama-3-1-8b_nvfp4_gemm_k_proj"
    assert problem_name("llama-3.1-8b_rope_d128", "Llama-3.1-8B") == "llama-3-1-8b_rope_d128"
    assert (
        problem_name("mistral_large_2411_fp8_quant", "Mistral-Large-Instruct-2411")
        == "mistral-large-instruct-2411_fp8_quant"
    )
    # a name that does not spell its model keeps all its words after the slug
    assert (
        problem_name("sd3_joint_attention", "Stable Diffusion 3 Medium (transformer)")
        == "stable-diffusion-3-medium_sd3_joint_attention"
    )
    with pytest.raises(ValueError, match="says what it computes"):
        problem_name("qwen3_8b", "Qwen3-8B")
    assert follows_rule("llama-3-1-8b_rope_d128", "Llama-3.1-8B")
    assert not follows_rule("llama31_8b_rope_d128", "Llama-3.1-8B")
    assert not follows_rule("llama-3-1-8b_rope-d128", "Llama-3.1-8B")


def test_every_built_problem_follows_the_rule():
    broken = []
    for path in sorted(SUITE.glob("*/*/definition.json")):
        definition = json.loads(path.read_text())
        model = next(t[len("model:") :] for t in definition["tags"] if t.startswith("model:"))
        if not follows_rule(definition["name"], model) or path.parent.name != definition["name"]:
            broken.append(definition["name"])
    assert not broken, broken
