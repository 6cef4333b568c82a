"""A CPU tier may size down `const` axes where constant-sized tensors alone are too large for a CPU (256 experts'
weights): only in workload.cpu.jsonl, honoured by loading, inputs, the analysis and the evaluator's sizes."""

import json

import pytest

from conftest import write_problem
from solbench.spec import SpecError, load_problem
from solbench.spec.tiers import CPU_WORKLOAD_FILE
from solbench.suite.tiers import MAX_FLOOR_BYTES, derive_cpu_tier, shrunk_constants, workload_bytes

EXPERTS = {  # 64 experts of 1024 x 4096 fp32 weights: 1 GiB of constant-sized weights at any token count
    "name": "experts",
    "axes": {
        "tokens": {"type": "var"},
        "experts": {"type": "const", "value": 64},
        "hidden": {"type": "const", "value": 4096},
        "inter": {"type": "const", "value": 1024},
        "top_k": {"type": "const", "value": 2},
    },
    "inputs": {
        "x": {"shape": ["tokens", "hidden"], "dtype": "float32"},
        "w": {"shape": ["experts", "inter", "hidden"], "dtype": "float32"},
    },
    "outputs": {"y": {"shape": ["tokens", "inter"], "dtype": "float32"}},
    "constraints": ["experts >= top_k"],
    "reference": ('import torch\n\ndef run(x, w):\n    """w: (64, 1024, 4096)"""\n    return x @ w.sum(0).t() / 2\n'),
}


def _workload(uuid, tokens, **const):
    return {
        "uuid": uuid,
        "axes": {"tokens": tokens, **const},
        "inputs": {"x": {"type": "random"}, "w": {"type": "random"}},
    }


@pytest.fixture
def experts(tmp_path):
    return write_problem(tmp_path / "experts", EXPERTS, [_workload(f"w{i}", t) for i, t in enumerate((128, 256))])


def test_a_const_override_is_refused_in_the_published_tier_and_honoured_in_the_cpu_tier(experts):
    (experts / "workload.jsonl").write_text(json.dumps(_workload("g", 128, experts=4)) + "\n")
    with pytest.raises(SpecError, match="only a CPU-tier workload.*may override a const axis"):
        load_problem(experts, "gpu")
    (experts / "workload.jsonl").write_text(json.dumps(_workload("g", 128)) + "\n")
    (experts / CPU_WORKLOAD_FILE).write_text(json.dumps(_workload("c", 16, experts=4, hidden=64)) + "\n")
    problem = load_problem(experts, "all")
    gpu, cpu = problem.workloads
    assert problem.axes_of(gpu)["experts"] == 64 and problem.const_overrides(gpu) == {}
    assert problem.axes_of(cpu) == {"tokens": 16, "experts": 4, "hidden": 64, "inter": 1024, "top_k": 2}
    assert problem.const_overrides(cpu) == {"experts": 4, "hidden": 64}
    assert problem.shape_of(problem.definition.inputs["w"], cpu) == (4, 1024, 64)
    assert workload_bytes(problem, cpu) == 4 * (16 * 64 + 4 * 1024 * 64 + 16 * 1024)


def test_a_cpu_override_must_still_satisfy_the_constraints(experts):
    (experts / CPU_WORKLOAD_FILE).write_text(json.dumps(_workload("c", 16, experts=1)) + "\n")
    with pytest.raises(SpecError, match="experts >= top_k"):
        load_problem(experts, "cpu")


def test_the_derived_cpu_tier_shrinks_const_axes_only_where_the_floor_is_too_large(experts):
    assert workload_bytes(load_problem(experts, "gpu"), {"tokens": 128}) > MAX_FLOOR_BYTES
    result = derive_cpu_tier(experts, analyze=False, write=True)
    assert result.action == "written" and "const axes sized down for the CPU" in result.reason
    problem = load_problem(experts, "cpu")
    for workload in problem.workloads:
        overrides = problem.const_overrides(workload)
        assert overrides and set(overrides) <= {"experts", "hidden", "inter"}  # top_k: not in a shape
        assert all(v % 16 == 0 for v in overrides.values())  # granularity kept
        assert problem.axes_of(workload)["experts"] >= 2  # the constraint holds
        assert workload_bytes(problem, workload) <= result_budget(result)
    # the values quoted in the docstring (64, 1024, 4096) are not literals of the code: they may shrink


def result_budget(result) -> int:
    return int(result.reason.split("≤ ")[1].split(" MB")[0]) * 1_000_000


def test_a_const_written_as_a_literal_in_the_code_is_kept(experts):
    problem = load_problem(experts, "gpu")
    literal = problem.definition.model_copy(update={"reference": EXPERTS["reference"].replace("/ 2", "/ 4096")})
    kept = shrunk_constants(
        type(problem)(root=problem.root, definition=literal, workloads=problem.workloads), {"tokens": 128}, 32_000_000
    )
    assert "hidden" not in kept and kept  # the others still shrink
    assert shrunk_constants(problem, {"tokens": 128}, 10**12) == {}  # nothing shrinks where the floor fits
    # the outermost dimension of the largest tensor (w: experts x inter x hidden) shrinks first: fewer experts
    # is fewer iterations of a reference looping over them
    assert list(shrunk_constants(problem, {"tokens": 128}, 32_000_000))[0] == "experts"


def test_the_analyzer_and_the_input_generator_follow_the_override(experts):
    from solbench.hardware import lookup
    from solbench.sol import analyze_problem
    from solbench.spec.inputs import inputs_for_analysis

    (experts / CPU_WORKLOAD_FILE).write_text(json.dumps(_workload("c", 16, experts=4, hidden=64)) + "\n")
    problem = load_problem(experts, "cpu")
    [result] = analyze_problem(problem, lookup("B200_1500MHz"))
    assert result.bytes == 4 * (16 * 64 + 4 * 1024 * 64 + 16 * 1024)  # x, w at 4 experts x 64 hidden, y
    assert result.flops_by_class["matrix"]["float32"] == 2 * 16 * 64 * 1024
    x, w = inputs_for_analysis(problem, problem.workloads[0], None)
    assert tuple(x.shape) == (16, 64) and tuple(w.shape) == (4, 1024, 64)
