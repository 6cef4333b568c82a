"""A baselines file may carry a reference (published) T_SOL per workload: the score report shows it beside
solbench's T_SOL with the ratio, never in its place; files without it load as before."""

import json

from rich.console import Console

from solbench.cli.render import score_tables
from solbench.scoring import Baseline, Baselines, score_traces
from solbench.scoring.baselines import load_baselines
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

HARDWARE = "B200_1500MHz"


def _trace(workload: str, t_sol_ms: float) -> Trace:
    evaluation = Evaluation(
        status=EvaluationStatus.PASSED,
        environment=Environment(hardware="test"),
        timestamp="now",
        correctness=Correctness(),
        performance=Performance(latency_ms=0.5, reference_latency_ms=1.0),
        solbench=EvaluationDetails(
            harness_version="test",
            device="cuda",
            device_name="test",
            sol=SolRecord(hardware=HARDWARE, t_sol_ms=t_sol_ms, bound="memory", coverage_full=True),
        ),
    )
    return Trace(
        definition="p", solution="s", evaluation=evaluation, workload=Workload(uuid=workload, axes={}, inputs={})
    )


def test_the_reference_t_sol_stands_beside_t_sol_with_the_ratio():
    baselines = Baselines(
        [
            Baseline(
                definition="p",
                workload="a",
                hardware=HARDWARE,
                latency_ms=2.0,
                sol_ms=0.2,
                source="published: SOL-ExecBench x",
            ),
            Baseline(definition="p", workload="b", hardware=HARDWARE, latency_ms=2.0),
        ]
    )
    report = score_traces([_trace("a", 0.1), _trace("b", 0.1)], HARDWARE, baselines=baselines)
    first, second = report.workloads
    # T_SOL stays solbench's; the reference figure stands beside it
    assert (first.reference_t_sol_ms, first.t_sol_ratio, first.t_sol_ms) == (0.2, 0.5, 0.1)
    assert first.score == second.score  # the reference figure does not enter S
    assert (second.reference_t_sol_ms, second.t_sol_ratio) == (None, None)
    console = Console(width=240, record=True)
    console.print(score_tables(report))
    header = next(line for line in console.export_text().splitlines() if "T_SOL ref" in line)
    assert header.index("T_SOL") < header.index("T_SOL ref") < header.index("ratio")


def test_baselines_files_without_sol_ms_still_load(tmp_path):
    path = tmp_path / "baselines.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "baselines": [
                    {
                        "definition": "p",
                        "workload": "a",
                        "hardware": "H200",
                        "latency_ms": 1.0,
                        "source": "reference (eager)",
                    }
                ],
            }
        )
    )
    assert load_baselines(path).get("p", "a", "h200").sol_ms is None
    report = score_traces([_trace("a", 0.1)], "H200", baselines=load_baselines(path))
    assert "T_SOL ref" not in Console(width=240, record=True).export_text() and report.workloads[0].t_sol_ratio is None
