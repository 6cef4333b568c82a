"""Problem and solution files: upstream files load unchanged, malformed ones get one clear message."""

import copy
import json

import pytest

from conftest import UPSTREAM, VECTOR_ADD, solution_dict, vector_workloads, write_problem
from solbench.spec import MissingDataError, SpecError, check_data_files, load_problem, load_solution

UPSTREAM_PROBLEMS = (
    sorted(p.name for p in UPSTREAM.iterdir() if (p / "definition.json").exists()) if UPSTREAM.is_dir() else []
)


@pytest.mark.upstream
@pytest.mark.parametrize("name", UPSTREAM_PROBLEMS)
def test_every_upstream_problem_loads(name):
    problem = load_problem(UPSTREAM / name)
    assert problem.workloads
    for workload in problem.workloads:
        axes = problem.axes_of(workload)
        for tensor in problem.definition.outputs.values():
            assert all(isinstance(d, int) for d in problem.definition.shape_of(tensor, axes))


@pytest.mark.upstream
def test_expression_axes_resolve():
    problem = load_problem(UPSTREAM / "flux_rope")
    assert problem.axes_of(problem.workloads[0])["half_head_dim"] == 64


@pytest.mark.upstream
def test_missing_data_file_is_named():
    problem = load_problem(UPSTREAM / "gqa_paged_decode")
    with pytest.raises(
        MissingDataError,
        match=r"inputs\.kv_indptr\.path: .*safetensors file not found: "
        r"data/flashinfer-trace/.*gqa_paged_decode_h32_kv8_d128_ps1_",
    ):
        check_data_files(problem)


def _broken(tmp_path, mutate, workloads=None):
    definition = copy.deepcopy(VECTOR_ADD)
    mutate(definition)
    return write_problem(tmp_path / "p", definition, workloads or vector_workloads(8))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda d: d["inputs"]["x"].update(dtype="float33"),
            r"definition.json: inputs\.x\.dtype: .*unknown dtype 'float33'",
        ),
        (lambda d: d["inputs"]["x"].update(shape=["M"]), r"inputs\.x\.shape\[0\]: unknown axis 'M'"),
        (lambda d: d["axes"].update(H={"type": "expr", "expression": "N +* 2"}), r"axes\.H\.expression: .*not a valid"),
        (
            lambda d: d["axes"].update(H={"type": "expr", "expression": "M * 2"}),
            r"axes\.H\.expression: unknown axis 'M'",
        ),
        (lambda d: d.update(reference="def go(x, y):\n    return x\n"), r"reference: no top-level function 'run'"),
        (lambda d: d.update(reference="def run(y, x):\n    return x\n"), r"must take the inputs in order"),
        (lambda d: d.update(reference="def run(x, y)\n"), r"reference: Python syntax error at line 1"),
        (lambda d: d.pop("outputs"), r"definition.json: outputs: Field required"),
        (lambda d: d["axes"].update(N={"type": "size"}), r"axes\.N"),
        (lambda d: d.update(constraints=["N >"]), r"constraints\[0\]"),
        (
            lambda d: d.update(custom_inputs_entrypoint="make"),
            r"custom_inputs_entrypoint: no top-level function 'make'",
        ),
    ],
)
def test_malformed_definition_names_file_and_field(tmp_path, mutate, message):
    with pytest.raises(SpecError, match=message):
        load_problem(_broken(tmp_path, mutate))


def test_malformed_workloads_name_line_and_field(tmp_path):
    root = write_problem(tmp_path / "p", VECTOR_ADD, vector_workloads(8))
    (root / "workload.jsonl").write_text(
        json.dumps(vector_workloads(8)[0]) + "\n" + '{"uuid": "b", "axes": {"N": -1}, "inputs": {}}\n'
    )
    with pytest.raises(SpecError, match=r"workload.jsonl:2: axes\.N: Input should be greater than or equal to 0"):
        load_problem(root)
    (root / "workload.jsonl").write_text(
        '{"uuid": "a", "axes": {}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}}\n'
    )
    with pytest.raises(SpecError, match=r"workload.jsonl:1: workload a: axes\.N: missing value for var axis"):
        load_problem(root)
    (root / "workload.jsonl").write_text('{"uuid": "a", "axes": {"N": 2}, "inputs": {"x": {"type": "random"}}}\n')
    with pytest.raises(SpecError, match=r"workload.jsonl:1: inputs\.y: workload a: no descriptor"):
        load_problem(root)
    (root / "workload.jsonl").write_text('{"uuid": "a", "axes": {"N": 2}, "inputs": {"x": {"type": "bogus"}}}\n')
    with pytest.raises(SpecError, match=r"workload.jsonl:1: inputs\.x"):
        load_problem(root)
    (root / "workload.jsonl").write_text("{not json\n")
    with pytest.raises(SpecError, match=r"workload.jsonl:1: invalid JSON"):
        load_problem(root)


def test_custom_inputs_mix_with_every_other_kind(tmp_path):
    definition = {
        **VECTOR_ADD,
        "inputs": {
            **VECTOR_ADD["inputs"],
            "t": {"shape": ["N"], "dtype": "float32"},
            "eps": {"shape": None, "dtype": "float32"},
        },
        "custom_inputs_entrypoint": "make",
        "reference": "def make(axes_and_scalars, device):\n    return {}\ndef run(x, y, t, eps):\n    return x + y\n",
    }
    inputs = {
        "x": {"type": "custom"},
        "y": {"type": "random"},
        "eps": {"type": "scalar", "value": 1e-6},
        "t": {"type": "safetensors", "path": "t.safetensors", "tensor_key": "t"},
    }
    workload = load_problem(
        write_problem(tmp_path / "p", definition, [{"uuid": "a", "axes": {"N": 2}, "inputs": inputs}])
    ).workloads[0]
    assert {name: d.type for name, d in workload.inputs.items()} == {n: d["type"] for n, d in inputs.items()}
    assert workload.scalar_inputs == {"eps": 1e-6}


def test_custom_inputs_without_an_entrypoint_name_line_and_field(tmp_path):
    inputs = {"x": {"type": "custom"}, "y": {"type": "random"}}
    root = write_problem(
        tmp_path / "p", VECTOR_ADD, vector_workloads(8) + [{"uuid": "a", "axes": {"N": 2}, "inputs": inputs}]
    )
    with pytest.raises(
        SpecError,
        match=r"workload.jsonl:2: inputs: workload a: 'custom' inputs need the "
        r"definition's custom_inputs_entrypoint",
    ):
        load_problem(root)


def test_missing_files_are_named(tmp_path):
    with pytest.raises(SpecError, match="not a problem directory"):
        load_problem(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecError, match=r"empty/definition.json: file not found"):
        load_problem(tmp_path / "empty")


def test_both_tolerance_spellings_are_read(tmp_path):
    workloads = vector_workloads(8, 9)
    workloads[0]["tolerance"] = {"max_atol": 0.5}
    workloads[1]["correctness"] = {"max_rtol": 0.25}
    problem = load_problem(write_problem(tmp_path / "p", VECTOR_ADD, workloads))
    assert problem.workloads[0].effective_tolerance.max_atol == 0.5
    assert problem.workloads[1].effective_tolerance.max_rtol == 0.25
    assert problem.workloads[1].effective_tolerance.required_matched_ratio == 0.99


@pytest.mark.parametrize(
    "spec_update, language",
    [({"language": "python"}, "pytorch"), ({"language": "cuda"}, "cuda_cpp"), ({"languages": ["triton"]}, "triton")],
)
def test_solution_language_spellings(tmp_path, spec_update, language):
    data = solution_dict(
        "def run(x, y):\n    return x + y\n", entry="kernel.cu::run" if language == "cuda_cpp" else "kernel.py::run"
    )
    del data["spec"]["languages"]
    data["spec"].update(spec_update)
    path = tmp_path / "solution.json"
    path.write_text(json.dumps(data))
    assert load_solution(path).spec.normalized_languages[0].value == language


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda s: s["spec"].update(entry_point="kernel.py:run"), r"spec\.entry_point.* must be 'file::function'"),
        (lambda s: s["spec"].update(entry_point="main.py::run"), r"file 'main.py' is not among sources"),
        (lambda s: s["spec"].update(languages=["fortran"]), r"unknown language 'fortran'"),
        (lambda s: s["sources"][0].update(path="../escape.py"), r"sources\[0\].*must be relative"),
        (lambda s: s.pop("author"), r"solution.json: author: Field required"),
    ],
)
def test_malformed_solution_names_field(tmp_path, mutate, message):
    data = solution_dict("def run(x, y):\n    return x + y\n")
    mutate(data)
    path = tmp_path / "solution.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SpecError, match=message):
        load_solution(path)


def test_what_upstream_accepts_loads_as_upstream_reads_it_with_a_warning_naming_file_line_and_field(tmp_path):
    workloads = vector_workloads(8, 16, 32, 64)
    workloads[1]["axes"]["M"] = 4  # an axis the definition does not declare
    workloads[2]["inputs"]["bias"] = {"type": "random"}  # an input it does not have
    workloads[2]["tolerance"] = {"max_atol": 0.1, "required_match_ratio": 0.5}  # upstream reads required_matched_ratio
    workloads[3]["tolerance"] = {"required_match_ratio": 0.5}
    root = write_problem(tmp_path / "p", VECTOR_ADD, workloads)
    problem = load_problem(root)
    assert problem.workloads[1].axes == {"N": 16} and set(problem.workloads[2].inputs) == {"x", "y"}
    assert [w.effective_tolerance.required_matched_ratio for w in problem.workloads[2:]] == [0.99, 0.99]
    path = root / "workload.jsonl"
    assert [w.split(": ")[:2] for w in problem.warnings] == [
        [f"{path}:2", "axes.M"],
        [f"{path}:3", "inputs.bias"],
        [f"{path}:3-4", "tolerance.required_match_ratio"],
    ]
    assert (
        "not an axis of vector_add" in problem.warnings[0]
        and "(it reads required_matched_ratio)" in problem.warnings[2]
    )
    assert [n.kind for n in problem.notes] == ["unknown-axis", "unknown-input", "ignored-field"]


@pytest.mark.parametrize("path", ["kernel\0.py", "x" * 256 + ".py", "folder/" + "y" * 256])
def test_a_source_path_no_file_system_takes_is_refused_when_the_solution_is_read(path):
    """A NUL or a name over 255 bytes made the harness's own write fail later, with the server's paths in the error
    its owner saw; the solution is refused where it is read instead."""
    from solbench.spec.solution import SourceFile

    with pytest.raises(ValueError, match="NUL|at most 255 bytes"):
        SourceFile(path=path, content="def run(x):\n    return x\n")
