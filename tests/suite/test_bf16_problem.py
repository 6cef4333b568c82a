"""A real bf16 problem of the shipped suite, end to end through the sandbox with the float64 golden check on."""

from dataclasses import replace
from pathlib import Path

import pytest

from solbench.evaluation import evaluate
from solbench.spec import load_problem, reference_solution
from solbench.spec.trace import EvaluationStatus

# A norm, not a matmul: bf16 matmuls are very slow on CPUs without bf16 units.
PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "L1" / "command-r-08-2024_layernorm_nobias_h8192"


@pytest.fixture(scope="module")
def problem():
    loaded = load_problem(PROBLEM)
    assert loaded.definition.inputs["hidden_states"].dtype == "bfloat16"
    return replace(loaded, workloads=loaded.workloads[:2])  # 1 and 7 tokens of 8192


@pytest.mark.slow
def test_the_reference_passes_with_its_golden_errors_recorded(problem, fast_config):
    assert fast_config.check_precision
    traces = evaluate(problem, reference_solution(problem.definition), fast_config)
    assert [t.evaluation.status for t in traces] == [EvaluationStatus.PASSED] * 2, traces[0].evaluation.log[-2000:]
    for trace in traces:
        # the float64 golden run happened: the bf16 reference is measurably off it, and the solution within bounds
        golden = trace.evaluation.correctness.extra["golden"]
        assert isinstance(golden, dict) and isinstance(golden.get("output"), dict), f"golden check not run: {golden}"
        golden = golden["output"]
        assert 0 < golden["reference_error"] and golden["solution_error"] <= golden["allowed"], golden
        assert any(c.rule == "precision_downgrade" and c.passed for c in trace.evaluation.solbench.checks)
