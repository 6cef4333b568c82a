"""A run's results read back from its trace files: pass counts and SOL scores per problem and set.

Everything is recomputed from the stored traces, so a resumed or partly failed run summarises
the same way as a clean one. The numbers come from `solbench.scoring.score_traces`, the aggregation
`solbench score` uses too; a problem's set is the folder its traces are stored under, which the
run chose with `spec.problem_set`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from solbench.runner.store import TraceStore
from solbench.scoring import UNSCORED_POLICY, Baselines, ScoreReport, score_traces
from solbench.spec.trace import Trace
from solbench.spec.trace_files import read_traces


@dataclass
class ProblemSummary:
    set: str
    problem: str
    solution: str
    """The run's solution name (the trace file's name: ``reference``, ``fast``, …)."""
    workloads: int
    passed: int
    statuses: dict[str, int]
    score: float | None
    """Mean SOL score over workloads (failures count 0, unscored ones are left out); None where none counts."""
    scored: int = 0
    """Workloads counted in `score`."""
    unscored: int = 0
    """Workloads left out of `score`: PASSED ones without T_SOL or T_b (see `unscored_policy`); all without hardware."""
    latency_ms: float | None = None
    """Geometric mean of T_k over the workloads; None unless every workload PASSED."""


@dataclass
class SetSummary:
    set: str
    problems: int = 0
    problems_passed: int = 0
    """Problems whose every workload PASSED."""
    workloads: int = 0
    workloads_passed: int = 0
    score: float | None = None
    """Mean of the problems' scores (problems without one are left out)."""


@dataclass
class RunSummary:
    hardware: str | None
    problems: list[ProblemSummary] = field(default_factory=list)
    sets: list[SetSummary] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """This run's jobs that wrote no traces, as ``set/problem/solution: why`` (filled in by the caller)."""
    lost_to_dead_workers: int = 0
    """How many of those failed because their worker process died on every attempt."""
    unscored_policy: str = UNSCORED_POLICY
    """How PASSED workloads without T_SOL or T_b count (score.report.UNSCORED_POLICY)."""

    def as_json(self) -> dict:
        return {"hardware": self.hardware, "unscored_policy": self.unscored_policy,
                "sets": [asdict(s) for s in self.sets], "problems": [asdict(p) for p in self.problems],
                "errors": self.errors, "lost_to_dead_workers": self.lost_to_dead_workers}


def summarize(out: Path, hardware: str | None, baselines: Baselines | None = None) -> RunSummary:
    """The summary of the traces stored under `out`, scored on `hardware` (None: counts only)."""
    files = [(path, read_traces(path)) for path in TraceStore(out).all_trace_files()]
    return summarize_traces([(path.parts[-3], path.parts[-2], path.stem, traces) for path, traces in files],
                            hardware, baselines)


def summarize_traces(stored: list[tuple[str, str, str, list[Trace]]], hardware: str | None,
                     baselines: Baselines | None = None) -> RunSummary:
    """The summary of (set, problem, solution name, traces), one per trace file of a run; T_SOL is what each
    trace records (a run attaches it as it goes)."""
    sets = {trace.definition: set_name for set_name, _, _, traces in stored for trace in traces}
    report = score_traces([t for *_, traces in stored for t in traces], hardware, baselines=baselines, sets=sets)
    summary = RunSummary(hardware=hardware, unscored_policy=report.unscored_policy)
    for set_name, problem, solution, traces in stored:
        summary.problems.append(_problem_summary(report, set_name, problem, solution, traces))
    summary.sets = [SetSummary(set=s.set, problems=s.problems, problems_passed=s.problems_passed,
                               workloads=s.workloads, workloads_passed=s.workloads_passed, score=s.score)
                    for s in report.sets]
    return summary


def _problem_summary(report: ScoreReport, set_name: str, problem: str, solution: str,
                     traces: list[Trace]) -> ProblemSummary:
    scored = report.problem(traces[0].definition, traces[0].solution) if traces else None
    if scored is None:
        return ProblemSummary(set=set_name, problem=problem, solution=solution, workloads=0, passed=0, statuses={},
                              score=None)
    return ProblemSummary(set=set_name, problem=scored.definition, solution=solution, workloads=scored.workloads,
                          passed=scored.passed, statuses=dict(scored.statuses), score=scored.score,
                          scored=scored.scored, unscored=scored.unscored, latency_ms=scored.latency_ms)


def write_summary(out: Path, summary: RunSummary) -> Path:
    path = Path(out) / "summary.json"
    path.write_text(json.dumps(summary.as_json(), indent=1) + "\n")
    return path
