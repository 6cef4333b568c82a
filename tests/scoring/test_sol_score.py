"""The bounded SOL score, aggregation and baselines."""

import json

import pytest

from solbench.scoring import Baseline, ScoreError, WorkloadScore, aggregate, load_baselines, save_baselines, sol_score


@pytest.mark.parametrize(
    "t_kernel, t_baseline, t_sol, expected",
    [
        (2.0, 2.0, 1.0, 0.5),  # matches the baseline
        (1.0, 2.0, 1.0, 1.0),  # at the speed of light
        (1.5, 2.0, 1.0, 2 / 3),  # halfway from baseline to SOL: (2-1)/((1.5-1)+(2-1))
        (11.0, 2.0, 1.0, 1 / 11),  # ten times slower than the baseline's distance
    ],
)
def test_score_formula(t_kernel, t_baseline, t_sol, expected):
    result = sol_score(t_kernel, t_baseline, t_sol)
    assert result.score == pytest.approx(expected) and not result.note


def test_below_t_sol_clamps_to_one():
    """The formula alone clamps; the floor (tests/scoring/test_sol_floor.py) refuses before it is reached."""
    result = sol_score(0.5, 2.0, 1.0)
    assert result.score == 1.0 and "below T_SOL" in result.note


def test_baseline_at_the_speed_of_light():
    assert sol_score(1.0, 1.0, 1.0).score == 0.5
    assert sol_score(1.2, 1.0, 1.0).score == 0.0


def _score(definition, workload, score, status="PASSED", t_kernel_ms=1.0):
    return WorkloadScore(
        definition=definition,
        workload=workload,
        status=status,
        score=score,
        t_kernel_ms=t_kernel_ms if status == "PASSED" else None,
        t_baseline_ms=2.0,
        t_sol_ms=0.5,
        baseline_source="test",
    )


def test_problem_and_set_means_count_failures_as_zero():
    scores = [_score("a", "1", 0.8), _score("a", "2", 0.0, status="RUNTIME_ERROR"), _score("b", "1", 0.5)]
    report = aggregate(scores, "H200", {"a": "L1", "b": "L1"})
    assert [(p.definition, p.score, p.passed, p.workloads) for p in report.problems] == [
        ("a", 0.4, 1, 2),
        ("b", 0.5, 1, 1),
    ]
    assert [(s.set, s.score, s.problems, s.problems_passed) for s in report.sets] == [("L1", pytest.approx(0.45), 2, 1)]


def test_latency_is_the_geometric_mean_and_needs_every_workload():
    report = aggregate(
        [
            _score("a", "1", 0.5, t_kernel_ms=1.0),
            _score("a", "2", 0.5, t_kernel_ms=4.0),
            _score("b", "1", 0.5, t_kernel_ms=1.0),
            _score("b", "2", 0.0, status="TIMEOUT"),
        ],
        "H200",
    )
    assert report.problem("a").latency_ms == pytest.approx(2.0)
    assert report.problem("b").latency_ms is None and report.problem("b").score == 0.25


def test_baselines_round_trip_and_bad_files(tmp_path):
    path = tmp_path / "baselines.json"
    save_baselines(path, [Baseline(definition="d", workload="w", hardware="H200", latency_ms=1.5)], "today", "0.1.0")
    baselines = load_baselines(path)
    assert baselines.get("d", "w", "h200").latency_ms == 1.5 and baselines.get("d", "w", "B200") is None
    path.write_text(
        json.dumps(
            {"version": 1, "baselines": [{"definition": "d", "workload": "w", "hardware": "x", "latency_ms": -1}]}
        )
    )
    with pytest.raises(ScoreError, match=r"baselines\.0\.latency_ms: Input should be greater than 0"):
        load_baselines(path)
    path.write_text(json.dumps({"version": 9, "baselines": []}))
    with pytest.raises(ScoreError, match="version 9 is not supported"):
        load_baselines(path)


def _passed_trace(samples_s, resolution_s):
    from solbench.evaluation.correctness import Verdict
    from solbench.evaluation.outcome import RunContext, make_trace, timing_summary
    from solbench.spec.trace import Environment, EvaluationStatus
    from solbench.spec.workload import Workload

    context = RunContext(
        definition="d",
        solution="s",
        environment=Environment(hardware="test"),
        device="cuda",
        device_name="test",
        clock={},
    )
    timing = timing_summary("cuda_events", samples_s, 1, 0, 1, [], resolution_s)
    return make_trace(
        context,
        Workload(uuid="w", axes={}, inputs={}),
        EvaluationStatus.PASSED,
        verdict=Verdict(),
        timing=timing,
        reference_timing=timing_summary("cuda_events", [1e-3], 1, 0, 1, []),
    )


def test_a_time_below_the_timers_resolution_is_flagged_implausible():
    from solbench.scoring import score_trace

    fast = _passed_trace([0.2e-6, 0.3e-6, 0.2e-6], resolution_s=0.5e-6)
    assert fast.evaluation.solbench.timing.below_resolution
    assert fast.evaluation.solbench.timing.resolution_ms == pytest.approx(0.5e-3)
    scored = score_trace(fast, t_sol_ms=1e-7, baselines=None, hardware="H200")
    assert scored.implausible and "below the timer's resolution" in scored.note
    normal = _passed_trace([20e-6, 21e-6], resolution_s=0.5e-6)
    assert not normal.evaluation.solbench.timing.below_resolution
    assert not score_trace(normal, t_sol_ms=1e-3, baselines=None, hardware="H200").implausible
