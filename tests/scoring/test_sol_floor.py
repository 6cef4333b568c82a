"""The speed-of-light floor: a workload measured below T_SOL x (1 - margin) less the timer's resolution is not
scored. It is IMPLAUSIBLE, a failure (S 0) with its evidence, alike in `score_traces`, `solbench score`,
`attach_sol` (eval, run) and a real evaluation against a hardware whose T_SOL the kernel beats."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from conftest import VECTOR_ADD, make_solution, vector_workloads, write_problem
from solbench.cli.app import app
from solbench.hardware import lookup
from solbench.scoring import attach_sol, score_trace, score_traces
from solbench.scoring.sol_score import DATASHEET_MARGIN, MEASURED_MARGIN, below_floor, floor_margin, sol_floor_ms
from solbench.spec.trace import (
    Correctness,
    Environment,
    Evaluation,
    EvaluationDetails,
    EvaluationStatus,
    Performance,
    SolRecord,
    Trace,
)
from solbench.spec.workload import Workload

HARDWARE = "H100_SXM"
T_SOL = 0.010  # ms


def _trace(
    workload: str,
    latency_ms: float,
    *,
    reference_ms: float = 0.040,
    t_sol_ms: float | None = T_SOL,
    definition: str = "rmsnorm",
) -> Trace:
    sol = SolRecord(hardware=HARDWARE, t_sol_ms=t_sol_ms, bound="memory", coverage_full=True) if t_sol_ms else None
    evaluation = Evaluation(
        status=EvaluationStatus.PASSED,
        environment=Environment(hardware="test"),
        timestamp="now",
        correctness=Correctness(),
        performance=Performance(latency_ms=latency_ms, reference_latency_ms=reference_ms),
        solbench=EvaluationDetails(harness_version="test", device="cuda", device_name="test", sol=sol),
    )
    return Trace(
        definition=definition,
        solution="cand",
        workload=Workload(uuid=workload, axes={}, inputs={}),
        evaluation=evaluation,
    )


def test_the_margin_is_relative_for_the_figures_and_absolute_for_the_timer():
    assert floor_margin("H100_SXM") == DATASHEET_MARGIN == 0.05 and floor_margin("LOCAL") == MEASURED_MARGIN == 0.25
    assert sol_floor_ms(1.0, "H200") == pytest.approx(0.95)
    assert sol_floor_ms(1.0, "H200", resolution_ms=0.0005) == pytest.approx(0.9495)
    assert sol_floor_ms(1.0, "local") == pytest.approx(0.75)
    assert below_floor(0.951, 1.0, "H200") is None and below_floor(0.9497, 1.0, "H200", 0.0005) is None
    assert "below the speed-of-light floor 0.95 ms" in below_floor(0.949, 1.0, "H200")


def test_the_issues_scenario_a_trace_rewritten_to_half_its_t_sol_scores_0_and_lowers_its_problem():
    """Two honest workloads; rewriting one's T_k to half its T_SOL used to give it S 1 and raise the problem's
    score. Now it is IMPLAUSIBLE with its evidence, counts 0, and the problem's score falls."""
    honest = [_trace("w0", 0.020), _trace("w1", 0.025)]
    before = score_traces(honest, HARDWARE)
    rewritten = [honest[0], _trace("w1", T_SOL / 2)]
    after = score_traces(rewritten, HARDWARE)
    refused = after.workloads[1]
    assert (refused.status, refused.score, refused.implausible) == ("IMPLAUSIBLE", 0.0, True)
    assert (refused.t_kernel_ms, refused.t_sol_ms, refused.bound) == (T_SOL / 2, T_SOL, "memory")
    assert refused.floor_ms == pytest.approx(T_SOL * 0.95) and "memory-bound" in refused.note
    problem = after.problem("rmsnorm")
    assert problem.score == pytest.approx(before.workloads[0].score / 2)
    assert problem.score < before.problem("rmsnorm").score
    assert (problem.passed, problem.statuses, problem.latency_ms) == (1, {"IMPLAUSIBLE": 1, "PASSED": 1}, None)
    assert after.sets[0].workloads_passed == 1


def test_within_the_margin_a_kernel_scores_1_and_counts():
    [scored] = score_traces([_trace("w0", T_SOL * 0.97)], HARDWARE).workloads
    assert (scored.status, scored.score, scored.implausible) == ("PASSED", 1.0, False)
    assert "within the margin" in scored.note


def test_without_a_baseline_the_floor_still_refuses():
    scored = score_trace(_trace("w0", T_SOL / 2, reference_ms=0.0), T_SOL, None, HARDWARE)
    assert (scored.status, scored.score) == ("IMPLAUSIBLE", 0.0)


def test_solbench_score_refuses_it_too(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in [_trace("w0", 0.020), _trace("w1", T_SOL / 2)]))
    result = CliRunner().invoke(app, ["score", str(path), "-H", HARDWARE, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [(w["status"], w["score"]) for w in report["workloads"]] == [
        ("PASSED", pytest.approx(0.75)),
        ("IMPLAUSIBLE", 0.0),
    ]
    assert report["problems"][0]["score"] == pytest.approx(0.375)
    table = CliRunner(env={"COLUMNS": "400"}).invoke(app, ["score", str(path), "-H", HARDWARE])
    assert "IMPLAUSIBLE" in table.stdout and "below the speed-of-light floor" in table.stdout


def _slow_hardware():
    """A CPU whose memory moves 1 MB/s: T_SOL of a 1000-element add (12 kB) is 12 ms, which any kernel beats."""
    return replace(
        lookup(HARDWARE), id="SLOW_TEST", name="a very slow test CPU", kind="cpu", memory_bandwidth_bytes_per_s=1e6
    )


def test_attach_sol_makes_a_trace_below_the_floor_implausible_as_score_would(tmp_path):
    from solbench.spec import load_problem

    problem = load_problem(write_problem(tmp_path / "vector_add", VECTOR_ADD, vector_workloads(1000)))
    hardware = _slow_hardware()
    trace = _trace("n1000", 0.01, definition="vector_add", t_sol_ms=None)
    trace = trace.model_copy(update={"workload": problem.workloads[0]})
    [attached] = attach_sol([trace], problem, hardware)
    evaluation = attached.evaluation
    assert evaluation.status is EvaluationStatus.IMPLAUSIBLE
    assert evaluation.solbench.failed_rule == "speed_of_light" and evaluation.log.startswith(
        "[solbench] IMPLAUSIBLE: T_k"
    )
    record = evaluation.solbench.sol
    assert record.implausible and record.score == 0.0 and record.t_sol_ms == pytest.approx(12)
    assert record.floor_ms == pytest.approx(12 * 0.95) and "(T_SOL 12 ms x (1 - 0.05))" in evaluation.solbench.failure
    Trace.model_validate(attached.model_dump(mode="json"))  # a valid trace, with its evidence kept
    # Scored later against the same hardware (score_traces, solbench score): the same failure.
    later = score_traces([attached], hardware).workloads[0]
    assert (later.status, later.score, later.implausible) == ("IMPLAUSIBLE", 0.0, True)
    assert score_traces([trace], hardware, problems=[problem]).workloads[0].status == "IMPLAUSIBLE"


@pytest.mark.slow
def test_a_real_evaluation_below_the_floor_is_implausible(vector_add_problem, fast_config):
    """An honest kernel, really evaluated, against a hardware whose T_SOL it beats: what a kernel that tampered
    its timing below T_SOL would look like (the guards refuse every timing tamper in the exploit corpus)."""
    from solbench.api import evaluate

    traces = evaluate(
        vector_add_problem,
        make_solution("import torch\ndef run(x, y):\n    return x + y\n"),
        config=fast_config,
        hardware=_slow_hardware(),
    )
    assert [t.evaluation.status for t in traces] == [EvaluationStatus.IMPLAUSIBLE] * 2
    assert all(t.evaluation.performance.latency_ms < t.evaluation.solbench.sol.floor_ms for t in traces)
    assert score_traces(traces, _slow_hardware()).problems[0].score == 0.0
