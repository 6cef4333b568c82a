"""`solbench score --weights REACH.json`: S weighted by each problem's share of a model's addressable time."""

import json

import pytest
from typer.testing import CliRunner

from solbench.cli.app import app
from solbench.scoring import ScoreError, score_traces
from solbench.scoring.weights import load_weights, weighted_score
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

HARDWARE = "H200"
SOL = SolRecord(hardware=HARDWARE, t_sol_ms=1.0, bound="memory", coverage_full=True)


def _trace(definition: str, latency_ms: float, solution: str = "cand") -> Trace:
    evaluation = Evaluation(
        status=EvaluationStatus.PASSED,
        environment=Environment(hardware="test"),
        timestamp="now",
        correctness=Correctness(),
        performance=Performance(latency_ms=latency_ms, reference_latency_ms=2.0),
        solbench=EvaluationDetails(harness_version="test", device="cpu", device_name="test", sol=SOL),
    )
    return Trace(
        definition=definition,
        solution=solution,
        evaluation=evaluation,
        workload=Workload(uuid=f"{definition}-w", axes={"N": 8}, inputs={}),
    )


TRACES = [_trace("bags", 4 / 3), _trace("bags", 1.9, "slow"), _trace("norm", 1.9)]


def test_weights_follow_the_runtime_share_and_the_plain_mean_sits_beside_them():
    report = score_traces(TRACES, HARDWARE)
    s_bags = report.problem("bags", "cand").score
    s_norm = report.problem("norm").score
    assert s_bags > s_norm  # the best solution of a problem counts
    result = weighted_score(report, {"bags": 0.6, "norm": 0.2, "absent": 0.1}, "DLRM")
    assert result.weighted == pytest.approx((0.6 * s_bags + 0.2 * s_norm) / 0.8)
    assert result.unweighted == pytest.approx((s_bags + s_norm) / 2)
    assert result.weight_scored == pytest.approx(0.8) and result.weight_missing == pytest.approx(0.1)
    assert weighted_score(report, {"absent": 1.0}).weighted is None


def test_score_cli_prints_the_weighted_score_from_a_reach_report(tmp_path):
    traces_file = tmp_path / "traces.jsonl"
    traces_file.write_text("".join(t.model_dump_json() + "\n" for t in TRACES))
    weights = tmp_path / "reach.json"
    weights.write_text(
        json.dumps(
            {
                "format": "solbench-reach/1",
                "model": "DLRM-DCNv2",
                "steps": 5,
                "problem_weights": {"bags": 0.3, "norm": 0.1},
            }
        )
    )
    result = CliRunner().invoke(app, ["score", str(traces_file), "-H", HARDWARE, "--weights", str(weights), "--json"])
    assert result.exit_code == 0, result.output
    weighted = json.loads(result.stdout)["runtime_weighted"]
    report = score_traces(TRACES, HARDWARE)
    assert weighted["model"] == "DLRM-DCNv2"
    assert weighted["weighted"] == pytest.approx(
        (0.3 * report.problem("bags", "cand").score + 0.1 * report.problem("norm").score) / 0.4
    )
    result = CliRunner().invoke(app, ["score", str(traces_file), "-H", HARDWARE, "--weights", str(weights)])
    assert result.exit_code == 0 and "runtime-weighted" in result.output and "30.00%" in result.output


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("{}", "no problem_weights"),
        ("[]", "cannot read"),
        ('{"problem_weights": {"a": -1}}', "negative"),
        ('{"problem_weights": {"a": NaN}}', "finite"),
    ],
)
def test_bad_weights_files(tmp_path, content, fragment):
    path = tmp_path / "w.json"
    path.write_text(content)
    with pytest.raises(ScoreError, match=fragment):
        load_weights(path)
