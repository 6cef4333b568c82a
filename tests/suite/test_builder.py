"""The one builder of recipe problems (suite_recipes/builder.py) and the rule that every recipe module uses it."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

import suite_recipes
from solbench.suite.draft import ModelRef
from suite_recipes.builder import problem, slug, tensor, var
from suite_recipes.template import render

CATALOG = Path(suite_recipes.__file__).parent
OLD_BUILDERS = {"l1", "_draft", "_problem", "_fib", "ProblemDraft"}
"""Names that built drafts before suite_recipes.builder.problem (l1.common.l1, nvfp4._draft, dlrm._problem,
fib_serving._fib) and the dataclass itself."""
OLD_HELPERS = {"_t", "_var", "_const", "_expr", "slug", "_slug", "var", "const", "expr", "tensor", "scalar", "uses"}
"""Private copies of the builder's field helpers and of `slug` that modules kept before."""

MODEL = ModelRef(name="Llama-3.1-8B", hf_id="meta-llama/Llama-3.1-8B", domain="language", config={"hidden_size": 4096})
CPU = [{"num_tokens": t} for t in range(1, 9)]
GPU = [{"num_tokens": t} for t in range(1024, 1040)]


def _make(**changes):
    fields = dict(
        axes={"num_tokens": var("tokens"), "hidden_size": {"type": "const", "value": 4096}},
        inputs={"x": tensor(["num_tokens", "hidden_size"], "bfloat16")},
        outputs={"y": tensor(["num_tokens", "hidden_size"], "bfloat16"), "amax": tensor(["num_tokens"], "float32")},
        reference="def run(x):\n    return x, x.float().abs().amax(-1)\n",
        workloads=CPU,
    )
    return problem("L1", MODEL, "llama31_8b_copy_amax", "copy", "copy and amax", **{**fields, **changes})


def _calls_and_defs(path: Path, root: Path = CATALOG) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in OLD_BUILDERS:
                found.append(f"{path.relative_to(root)}:{node.lineno} calls {name}(...)")
        elif isinstance(node, ast.FunctionDef) and node.name in OLD_BUILDERS | OLD_HELPERS:
            found.append(f"{path.relative_to(root)}:{node.lineno} defines {node.name}")
    return found


def test_no_recipe_module_builds_a_draft_but_through_the_one_builder():
    modules = sorted(p for p in CATALOG.rglob("*.py") if p.name != "builder.py")
    assert len(modules) >= 10
    found = [hit for path in modules for hit in _calls_and_defs(path)]
    assert found == [], "use suite_recipes.builder.problem:\n" + "\n".join(found)


def test_the_check_sees_a_direct_construction(tmp_path):
    module = tmp_path / "recipe.py"
    module.write_text(
        "from solbench.suite.draft import ProblemDraft\n\n\ndef x(m):\n"
        "    return ProblemDraft(set='L1', name='n', model=m)\n"
    )
    assert _calls_and_defs(module, tmp_path) == ["recipe.py:5 calls ProblemDraft(...)"]


def test_defaults_tags_name_and_tolerance_of_the_least_precise_output():
    draft = _make()
    assert draft.name == "llama-3-1-8b_copy_amax" and slug(MODEL) == "llama-3-1-8b"
    assert draft.tags == [
        "set:L1",
        "model:Llama-3.1-8B",
        "hf:meta-llama/Llama-3.1-8B",
        "domain:language",
        "pass:forward",
        "origin:recipe",
        "config:hidden_size=4096",
    ]
    assert draft.tolerance == {"max_atol": 2e-2, "max_rtol": 2e-2, "required_matched_ratio": 0.99}
    assert draft.workloads == CPU and draft.cpu_workloads is None
    exact = _make(matched_ratio=1.0, atol=1e-12, tags=["family:x"], backward=True)
    assert exact.tolerance == {"max_atol": 1e-12, "max_rtol": 2e-2, "required_matched_ratio": 1.0}
    assert exact.tags[-1] == "family:x" and "pass:backward" in exact.tags
    given = {"max_atol": 0.5, "max_rtol": 0.5, "required_matched_ratio": 0.9}
    assert _make(tolerance=given).tolerance == given


def test_gpu_tier_goes_through_sweeps_tiered():
    draft = _make(gpu=GPU)
    assert draft.workloads == GPU and draft.cpu_workloads == CPU
    with pytest.raises(ValueError, match="at least 16"):
        _make(gpu=GPU[:15])
    with pytest.raises(ValueError, match="axes"):
        _make(gpu=[{"num_tokens": w["num_tokens"], "batch": 1} for w in GPU])


def test_workloads_are_distinct_and_at_least_eight():
    with pytest.raises(ValueError, match="listed twice"):
        _make(workloads=CPU + CPU[:1])
    with pytest.raises(ValueError, match="at least 8"):
        _make(workloads=CPU[:7])
    assert _make(workloads=[]).workloads == []  # the recipe sets both tiers afterwards


def test_the_example_of_docs_suite_builds_a_problem_with_both_tiers(tmp_path):
    docs = Path(__file__).resolve().parents[2] / "docs" / "suite.md"
    code = re.search(r"```python\n(from suite_recipes\.builder import .*?)```", docs.read_text(), re.S).group(1)
    (tmp_path / "example_recipe.py").write_text(code)
    spec = importlib.util.spec_from_file_location("example_recipe", tmp_path / "example_recipe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = ModelRef(
        name="Llama-3.1-8B",
        hf_id="meta-llama/Llama-3.1-8B",
        domain="language",
        config={"hidden_size": 4096, "rms_norm_eps": 1e-05, "vocab_size": 128256},
    )
    draft = module.rmsnorm(model)
    assert draft.name == "llama-3-1-8b_rmsnorm_h4096"
    assert "config:rms_norm_eps=1e-05" in draft.tags and "config:vocab_size=128256" not in draft.tags
    assert len(draft.workloads) == 16 and len(draft.cpu_workloads) == 8
    assert draft.reference == render("l1/rmsnorm.py") and draft.scalars == {"eps": 1e-05}
