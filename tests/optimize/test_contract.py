"""The solution contract: what it says of a problem, the templates it offers, and the instructions that render it."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import get_args, get_origin

import pytest
from pydantic import BaseModel

from solbench.guard import blocking, check_solution
from solbench.guard.rules import RULES
from solbench.optimize.contract import arguments, calling_style, solution_contract
from solbench.optimize.errors import UnknownTemplate
from solbench.optimize.instructions import guide_files, instructions_text, schema_fields
from solbench.optimize.solution_templates import solution_template
from solbench.spec import Solution, load_problem
from solbench.spec.definition import Definition

ROOT = Path(__file__).resolve().parents[2]
RMSNORM = ROOT / "examples" / "rmsnorm"
BUNDLED = sorted([RMSNORM / "definition.json", *(ROOT / "problems").glob("*/*/definition.json")])
FIRST_OF_EACH_SET = {
    min(path for path in BUNDLED if path.parent.parent == folder) for folder in {p.parent.parent for p in BUNDLED}
}
"""Checked by default; every other bundled problem under `-m slow`."""
LANGUAGES = ("pytorch", "triton", "cpp", "cuda")
STYLES = ("value", "dps")


def test_the_contract_names_the_problems_own_arguments_shapes_dtypes_and_calling_styles():
    problem = load_problem(RMSNORM)
    contract = solution_contract(problem, problem.workloads[:3], "cpu")

    assert contract.problem == "rmsnorm_fp32_h2048"
    assert [(a.name, a.dtype, a.shape, a.python_type, a.cpp_type) for a in contract.inputs] == [
        ("hidden_states", "float32", ["batch_size", "hidden_size"], "torch.Tensor", "torch::Tensor"),
        ("weight", "float32", ["hidden_size"], "torch.Tensor", "torch::Tensor"),
        ("eps", "float32", None, "float", "double"),
    ]
    assert [(a.name, a.shape_text) for a in contract.outputs] == [("output", "[batch_size, hidden_size]")]
    assert [(axis.name, axis.kind, axis.sizes) for axis in contract.axes] == [
        ("batch_size", "var", [1, 7, 64]),
        ("hidden_size", "const", [2048]),
    ]
    value, dps = contract.calling_styles
    assert (value.style, value.destination_passing_style) == ("value", False)
    assert value.python_signature == "run(hidden_states, weight, eps) -> output"
    assert value.cpp_signature == "torch::Tensor run(torch::Tensor hidden_states, torch::Tensor weight, double eps)"
    assert (dps.style, dps.destination_passing_style) == ("dps", True)
    assert dps.python_signature == "run(hidden_states, weight, eps, output) -> None"
    assert dps.cpp_signature.startswith("void run(") and dps.cpp_signature.endswith("torch::Tensor output)")

    assert [group.workloads for group in contract.tolerances] == [["rmsnorm-b1", "rmsnorm-b7", "rmsnorm-b64"]]
    assert contract.precision_policy == "strict" and "float64 golden" in contract.precision_rule
    assert [(rule.rule, rule.why) for rule in contract.static_rules] == [(r.id, r.explanation) for r in RULES.values()]
    assert contract.solution_schema == Solution.model_json_schema()
    assert "cuda_cpp" not in [language.language for language in contract.languages]
    cpp = next(language for language in contract.languages if language.language == "cpp")
    assert "-O3 then compile_options.cflags" in cpp.built and "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)" in cpp.built
    assert [(t.language, t.style, t.passes_as_written) for t in contract.templates] == [
        (language, style, language != "cpp") for language in ("pytorch", "triton", "cpp") for style in STYLES
    ]
    on_gpu = solution_contract(problem, problem.workloads, "cuda")
    assert [t.file for t in on_gpu.templates][-2:] == ["templates/cuda-value.json", "templates/cuda-dps.json"]


def test_every_correctness_rule_the_contract_names_is_one_the_checker_applies():
    checker = (ROOT / "src" / "solbench" / "evaluation" / "correctness.py").read_text()
    problem = load_problem(RMSNORM)
    for rule in solution_contract(problem, problem.workloads, "cpu").correctness_rules:
        assert f'"{rule.rule}"' in checker, rule.rule


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(path, id=path.parent.name, marks=() if path in FIRST_OF_EACH_SET else pytest.mark.slow)
        for path in BUNDLED
    ],
)
def test_every_template_of_a_bundled_problem_is_a_valid_solution_with_the_problems_signature(path):
    definition = Definition.model_validate_json(path.read_text())
    inputs, outputs = list(definition.inputs), list(definition.outputs)
    for language in LANGUAGES:
        for style in STYLES:
            template = solution_template(definition, language, style, "cpu")
            again = Solution.model_validate_json(template.model_dump_json())  # what an agent's file reads as
            assert again.definition == definition.name and again.spec.destination_passing_style == (style == "dps")
            assert not blocking(check_solution(again)), [f.one_line() for f in check_solution(again)]
            entry = next(s.content for s in again.sources if s.path == again.spec.entry_file)
            parameters = inputs + (outputs if style == "dps" else [])
            if language in ("pytorch", "triton"):
                run = next(
                    node
                    for node in ast.parse(entry).body
                    if isinstance(node, ast.FunctionDef) and node.name == again.spec.entry_symbol
                )
                assert [a.arg for a in run.args.args] == parameters
            else:
                signature = calling_style(definition, "dps" if style == "dps" else "value").cpp_signature
                assert f"\n{signature} {{\n" in entry
                assert all(f"{a.cpp_type} {a.name}" in signature for a in arguments(definition.inputs))
                assert 'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("run", &run); }' in entry
                assert again.spec.compile_options is not None
    assert solution_template(definition, "cuda", "dps", "cpu").spec.normalized_languages[0].value == "cuda_cpp"


def test_a_template_for_an_unknown_language_or_style_says_which_exist():
    definition = load_problem(RMSNORM).definition
    with pytest.raises(UnknownTemplate, match=r"language 'cutlass' \(templates: pytorch, triton, cpp, cuda\)"):
        solution_template(definition, "cutlass", "value", "cpu")
    with pytest.raises(UnknownTemplate, match=r"style 'inplace' \(templates: value, dps\)"):
        solution_template(definition, "pytorch", "inplace", "cpu")
    assert solution_template(definition, "python", "value", "cpu").spec.languages == ["pytorch"]  # an older name


def _models_in(annotation) -> list[tuple[type[BaseModel], str]]:
    """The pydantic models an annotation holds, with "[]" for those inside a list."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, "")]
    if get_origin(annotation) is list:
        return [(model, "[]") for model, _ in _models_in(get_args(annotation)[0])]
    return [found for argument in get_args(annotation) for found in _models_in(argument)]


def _field_paths(model: type[BaseModel], prefix: str = "") -> set[str]:
    paths = set()
    for name, info in model.model_fields.items():
        paths.add(prefix + name)
        for inner, marker in _models_in(info.annotation):
            paths |= _field_paths(inner, f"{prefix}{name}{marker}.")
    return paths


def test_the_schema_walk_lists_every_field_of_the_solution_nested_ones_included():
    listed = {path for path, _, _, _ in schema_fields(Solution.model_json_schema())}
    assert listed == _field_paths(Solution)
    assert {"spec.compile_options.cuda_cflags", "sources[].content", "spec.destination_passing_style"} <= listed


def test_the_instructions_say_the_contract_and_the_round_folder_gets_them_with_every_template():
    problem = load_problem(RMSNORM)
    contract = solution_contract(problem, problem.workloads[:3], "cpu")
    text = instructions_text(contract)
    for style in contract.calling_styles:
        assert style.python_signature in text and style.cpp_signature in text
    for rule in RULES:
        assert f"`{rule}`" in text
    for needed in (
        "`spec.destination_passing_style` (boolean, optional)",
        "`sources[].content` (string, required)",
        "| input | `eps` | `float` | `double` | float32 | scalar |",
        "- `batch_size` (var): 1, 7, 64",
        "| rmsnorm-b1, rmsnorm-b7, rmsnorm-b64 | 0.01 | 0.01 | 0.99 | none | false |",
        "**The precision rule** (policy `strict`)",
        "`solbench test solution.json`",
        "`solbench check solution.json`",
    ):
        assert needed in text, needed

    files = guide_files(contract, problem.definition)
    assert set(files) == {"INSTRUCTIONS.md", *(t.file for t in contract.templates)}
    assert files["INSTRUCTIONS.md"] == text
    for template in contract.templates:
        assert f"`{template.file}`" in text
        solution = Solution.model_validate(json.loads(files[template.file]))
        assert solution == solution_template(problem.definition, template.language, template.style, "cpu")


TEMPLATE_AGENT = """
import shutil
seen = {"files": sorted(str(p) for p in Path(".").rglob("*") if ".solbench" not in p.parts)}
Path(os.environ["SEEN_DIR"], "round.json").write_text(json.dumps(seen))
shutil.copy("templates/pytorch-value.json", "solution.json")  # only what the round folder holds
Path("solutions").mkdir()
for name in ("pytorch-dps", "triton-value", "triton-dps"):
    shutil.copy(f"templates/{name}.json", f"solutions/{name}.json")
"""


@pytest.mark.slow
def test_an_agent_given_only_a_round_folder_writes_a_passing_solution_in_each_calling_style(
    tmp_path, probed_home, monkeypatch
):
    from optimize.loop_fixtures import agent_command, fast_settings, loop_config, vector_add_problem
    from solbench.optimize.loop import run_optimize

    seen = tmp_path / "seen"
    seen.mkdir()
    monkeypatch.setenv("SEEN_DIR", str(seen))
    rounds = []
    run_optimize(
        fast_settings(
            vector_add_problem(tmp_path),
            agent_command(tmp_path, TEMPLATE_AGENT),
            tmp_path / "run",
            loop_config(),
            rounds=1,
            candidates=4,
            budget_evals=4,
        ),
        on_round=rounds.append,
    )

    files = set(json.loads((seen / "round.json").read_text())["files"])
    assert {"INSTRUCTIONS.md", "templates/pytorch-value.json", "templates/cpp-dps.json"} <= files
    assert not any(name.startswith("templates/cuda") for name in files)  # a CPU run offers what runs on it
    candidates = rounds[0].candidates
    assert [c.file for c in candidates] == [
        "solution.json",
        "solutions/pytorch-dps.json",
        "solutions/triton-dps.json",
        "solutions/triton-value.json",
    ]
    assert [c.statuses for c in candidates] == [{"PASSED": 3}] * 4, [c.error for c in candidates]


NASTY_DESCRIPTION = "read from C:\\data\\\nint not_a_comment = ;\r\nends in a backslash \\"
"""A description whose line breaks and trailing backslashes would turn comment text into C++ code."""


@pytest.mark.parametrize("language", ["cpp", "cuda"])
def test_a_native_templates_header_stays_comments_whatever_the_descriptions_hold(language):
    definition = Definition.model_validate(
        {
            "name": "described",
            "op_type": "elementwise",
            "axes": {"N": {"type": "var"}},
            "inputs": {"x": {"shape": ["N"], "dtype": "float32", "description": NASTY_DESCRIPTION}},
            "outputs": {"y": {"shape": ["N"], "dtype": "float32"}},
            "reference": "import torch\n\ndef run(x):\n    return x\n",
        }
    )
    (source,) = solution_template(definition, language, "value", "cpu").sources
    header = source.content.split("#include", 1)[0].splitlines()
    assert header and all(line.startswith("//") and not line.endswith("\\") for line in header), header
    assert any("not_a_comment" in line for line in header)


@pytest.mark.slow
@pytest.mark.parametrize("style", STYLES)
def test_a_cpp_template_builds_binds_the_problems_signature_and_raises_until_written(tmp_path, fast_config, style):
    from conftest import VECTOR_ADD, vector_workloads, write_problem
    from solbench import api

    definition = {**VECTOR_ADD, "inputs": {**VECTOR_ADD["inputs"]}}
    definition["inputs"]["x"] = {**VECTOR_ADD["inputs"]["x"], "description": NASTY_DESCRIPTION}
    problem = load_problem(write_problem(tmp_path / "vector_add", definition, vector_workloads(1000)))
    template = solution_template(problem.definition, "cpp", style, "cpu")
    (trace,) = api.evaluate(problem, template, config=fast_config)
    assert trace.evaluation.status.value == "RUNTIME_ERROR"  # built and called: a build failure is COMPILE_ERROR
    assert "run: write the kernel that computes z" in trace.evaluation.log  # raised by the body, not a bad call


@pytest.mark.parametrize("returned", ["(x + y,)", '{"z": x + y}', "x + y"], ids=["one-tuple", "dict", "bare"])
def test_a_python_template_runs_whatever_form_the_reference_returns_and_keeps_descriptions_exactly(tmp_path, returned):
    import subprocess
    import sys

    described = 'from C:\\x\\users\\N, \\u00e9 and """quotes""" and """"'
    definition = Definition.model_validate(
        {
            "name": "add_one_output",
            "op_type": "elementwise",
            "axes": {"N": {"type": "var"}},
            "inputs": {
                "x": {"shape": ["N"], "dtype": "float32", "description": described},
                "y": {"shape": ["N"], "dtype": "float32"},
            },
            "outputs": {"z": {"shape": ["N"], "dtype": "float32"}},
            "reference": f"import torch\n\ndef run(x, y):\n    return {returned}\n",
        }
    )
    template = solution_template(definition, "pytorch", "dps", "cpu")
    for source in template.sources:
        (tmp_path / source.path).write_text(source.content)
    entry = (tmp_path / "kernel.py").read_text()
    assert described in ast.get_docstring(ast.parse(entry))  # the text as written, not a SyntaxError
    check = "import torch, kernel; z = torch.empty(3); kernel.run(torch.ones(3), torch.ones(3), z); print(z.tolist())"
    ran = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and ran.stdout.strip() == "[2.0, 2.0, 2.0]", ran.stderr
