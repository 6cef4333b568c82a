"""`solbench extract`: small configs, the written folder loads, and its reference is the transformers module."""

import json
import sys

import pytest

transformers = pytest.importorskip("transformers")
import torch  # noqa: E402 - after the importorskip, which skips the module without transformers

from solbench.spec import load_problem  # noqa: E402 - after the importorskip above
from solbench.suite.draft import ModelRef, write_problem  # noqa: E402 - after the importorskip above
from solbench.suite.extract import ExtractError, Request, extract  # noqa: E402 - after the importorskip above
from solbench.suite.extract.extractor import load_reference  # noqa: E402 - after the importorskip above

TINY_LLAMA = {
    "name": "tiny-llama",
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "hidden_act": "silu",
}


def _request(module, **options):
    return Request(
        model=ModelRef("tiny-llama", "example/tiny-llama", "language", {}),
        record=TINY_LLAMA,
        architecture="llama",
        module=module,
        dtype=options.pop("dtype", "float32"),
        **options,
    )


def _module(kind: str):
    """The transformers module itself, built independently of the extractor."""
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama

    config = LlamaConfig(**{k: v for k, v in TINY_LLAMA.items() if k != "name"})
    if kind == "mlp":
        return modeling_llama.LlamaMLP(config)
    return modeling_llama.LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)


def _inputs(reference, draft, axes):
    torch.manual_seed(0)
    const = {k: a["value"] for k, a in draft.axes.items() if a["type"] == "const"}
    return reference["make_inputs"]({**const, **axes}, torch.device("cpu"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["mlp", "norm"])
def test_forward_reference_equals_the_transformers_module(tmp_path, kind):
    draft = extract(_request(kind, tokens=[1, 5, 33]))
    folder = write_problem(draft, tmp_path)
    problem = load_problem(folder)
    assert problem.definition.name == draft.name and len(problem.workloads) == 3
    assert "transformers" not in draft.reference and "origin:extract" in draft.tags
    assert draft.set == ("L1" if kind == "norm" else "L2")
    reference = load_reference(draft.reference)
    inputs = _inputs(reference, draft, {"num_tokens": 33})
    module = _module(kind)
    names = list(draft.inputs)
    weights = {name: inputs[name] for name in names[1:]}
    if kind == "mlp":
        module.load_state_dict({k.replace("_proj_weight", "_proj.weight"): v for k, v in weights.items()})
    else:
        (weight,) = weights.values()
        module.load_state_dict({"weight": weight})
    with torch.no_grad():
        expected = module(inputs["hidden_states"])
    got = reference["run"](*(inputs[n] for n in names))
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    assert expected.abs().mean() > 0.1  # realistic magnitudes, not a near-zero output


def test_backward_gradients_equal_autograd_on_the_module():
    draft = extract(_request("mlp", backward=True, tokens=[4, 9]))
    assert draft.backward and list(draft.outputs) == [f"grad_{n}" for n in list(draft.inputs)[:-1]]
    reference = load_reference(draft.reference)
    inputs = _inputs(reference, draft, {"num_tokens": 9})
    module = _module("mlp")
    names = list(draft.inputs)
    module.load_state_dict(
        {k.replace("_proj_weight", "_proj.weight"): v for k, v in inputs.items() if k.endswith("_proj_weight")}
    )
    x = inputs["hidden_states"].clone().requires_grad_()
    out = module(x)
    expected = torch.autograd.grad(
        out, [x, module.gate_proj.weight, module.up_proj.weight, module.down_proj.weight], inputs["grad_output"]
    )
    got = reference["run"](*(inputs[n] for n in names))
    assert len(got) == 4
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_attention_keeps_token_dims_dynamic_and_embeds_rotary_frequencies():
    draft = extract(_request("attention", dtype="bfloat16", shapes=[(1, 3), (2, 17)]))
    assert draft.axes["batch_size"]["type"] == "var" and draft.axes["seq_len"]["type"] == "var"
    assert "_ROTARY_INV_FREQ" in draft.reference and "import transformers" not in draft.reference
    reference = load_reference(draft.reference)
    inputs = _inputs(reference, draft, {"batch_size": 2, "seq_len": 17})
    out = reference["run"](*(inputs[n] for n in draft.inputs))
    assert out.shape == (2, 17, 64) and out.dtype == torch.bfloat16


def test_bad_requests_raise_extract_errors():
    with pytest.raises(ExtractError, match="no module kind 'moe'"):
        extract(_request("moe"))
    with pytest.raises(ExtractError, match="not supported"):
        extract(Request(ModelRef("x", "", "language", {}), TINY_LLAMA, "nonesuch", "mlp"))
    with pytest.raises(ExtractError, match="not divisible"):
        extract(_request("mlp", tp=5))


def test_modules_whose_rank_is_not_a_function_of_its_inputs_have_no_tp_shard():
    """A decoder layer adds partial sums to the residual and normalises; OLMo-2 normalises q/k over all heads."""
    with pytest.raises(ExtractError, match="no tensor-parallel shard: a TP rank's attention"):
        extract(_request("decoder_layer", tp=2))
    olmo = Request(
        model=ModelRef("tiny-olmo", "", "language", {}),
        record=TINY_LLAMA,
        architecture="olmo2",
        module="attention",
        tp=2,
    )
    with pytest.raises(ExtractError, match="q_norm/k_norm normalise over the full"):
        extract(olmo)


def _cli(monkeypatch, capsys, *args):
    """Run `solbench extract ...` in this process (main() maps errors to exit statuses)."""
    from solbench.cli.app import main

    monkeypatch.setattr(sys, "argv", ["solbench", "extract", *args])
    code = 0
    try:
        main()
    except SystemExit as exit_:
        code = exit_.code or 0
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "No-Such-Model", "--module", "mlp"], "unknown model"),
        (["--model", "Llama-3.1-8B", "--module", "moe"], "no module kind"),
        (["--module", "mlp"], "exactly one of --model"),
        (["--model", "Llama-3.1-8B", "--module", "mlp", "--shapes", "1by2"], "BATCHxSEQ"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, args, message):
    configs = tmp_path / "configs.json"
    configs.write_text(
        json.dumps(
            {
                "models": [
                    {
                        **TINY_LLAMA,
                        "name": "Llama-3.1-8B",
                        "hf_id": "meta-llama/x",
                        "domain": "language",
                        "model_type": "llama",
                    }
                ]
            }
        )
    )
    code, _, err = _cli(monkeypatch, capsys, *args, "--configs", str(configs), "--out", str(tmp_path))
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_cli_writes_a_folder_from_a_config_file(tmp_path, monkeypatch, capsys):
    config = tmp_path / "tiny.json"
    config.write_text(json.dumps(TINY_LLAMA))
    code, out, err = _cli(
        monkeypatch,
        capsys,
        "--config",
        str(config),
        "--architecture",
        "llama",
        "--module",
        "norm",
        "--dtype",
        "float32",
        "--tokens",
        "1,8",
        "--out",
        str(tmp_path / "out"),
    )
    assert code == 0, err
    folder = tmp_path / "out" / "L1" / "tiny-llama_hf_norm"
    assert out.strip() == str(folder) and "extract:" in err
    assert load_problem(folder).definition.custom_inputs_entrypoint == "make_inputs"


def test_backward_leaves_out_weights_no_gradient_depends_on():
    """A LayerNorm bias changes no gradient: it is not an input (held at zero), its gradient still an output."""
    record = {
        "name": "tiny-vit",
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_attention_heads": 2,
        "layer_norm_eps": 1e-12,
        "hidden_act": "gelu",
        "qkv_bias": True,
    }
    draft = extract(
        Request(
            ModelRef("tiny-vit", "example/tiny-vit", "vision", {}),
            record,
            "vit",
            "norm",
            dtype="float32",
            backward=True,
            tokens=[3, 8],
        )
    )
    assert list(draft.inputs) == ["hidden_states", "weight", "grad_output"]
    assert list(draft.outputs) == ["grad_hidden_states", "grad_weight", "grad_bias"]
    reference = load_reference(draft.reference)
    inputs = _inputs(reference, draft, {"num_tokens": 8})
    grads = reference["run"](*(inputs[n] for n in draft.inputs))
    torch.testing.assert_close(grads[2], inputs["grad_output"].sum(0))


def test_extracted_suite_problems_cite_published_values():
    """Every config: tag of a shipped origin:extract folder is the model-configs.json value."""
    from pathlib import Path

    from solbench.suite.draft import _config_text
    from solbench.suite.extract.configs import DEFAULT_CONFIGS, load_records, lookup

    records = load_records(DEFAULT_CONFIGS)
    root = Path(__file__).resolve().parents[2] / "problems"
    seen = 0
    for definition in sorted(root.glob("*/*/definition.json")):
        tags = json.loads(definition.read_text())["tags"]
        if "origin:extract" not in tags:
            continue
        seen += 1
        record = records[next(t[6:] for t in tags if t.startswith("model:"))]
        assert f"hf:{record['hf_id']}" in tags and f"domain:{record['domain']}" in tags
        for tag in (t[7:] for t in tags if t.startswith("config:")):
            key, value = tag.split("=", 1)
            assert _config_text(lookup(record, key)) == value, f"{definition.parent.name}: {key}"
    assert seen >= 20
