"""A run's results read back from its trace files: pass counts and SOL scores per problem and set.

Everything is recomputed from the stored traces, so a resumed or partly failed run summarises
the same way as a clean one. The summary holds the ScoreReport of `solbench.scoring.score_traces`, the
aggregation `solbench score` uses too, and adds only where the run stored each problem; a problem's set is
the folder its traces are stored under, which the run chose with `spec.problem_set`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from solbench.runner.store import TraceStore
from solbench.scoring import Baselines, ProblemScore, ScoreReport, SetScore, score_traces
from solbench.spec.trace import Trace
from solbench.spec.trace_files import read_traces


@dataclass(frozen=True)
class RunEntry:
    """One trace file of the run: where the run stored it and its problem's entry in the score report."""

    set: str
    """The set folder the run stored it under."""
    problem: str
    """The definition's name (the problem folder's name for a file without traces)."""
    solution: str
    """The run's solution name (the trace file's name: ``reference``, ``fast``, …)."""
    result: ProblemScore
    """The report's entry for this problem and solution: counts, mean S, geometric-mean T_k."""

    def as_json(self) -> dict:
        shown = self.result.model_dump(mode="json", exclude={"set", "definition", "solution"})
        return {"set": self.set, "problem": self.problem, "solution": self.solution, **shown}


@dataclass(frozen=True)
class RunSummary:
    """A run's results: the ScoreReport of its traces (the one aggregation `solbench score` uses) and its files."""

    report: ScoreReport
    problems: list[RunEntry] = field(default_factory=list)
    """One entry per trace file, in the order stored."""
    errors: list[str] = field(default_factory=list)
    """This run's jobs that wrote no traces, as ``set/problem/solution: why`` (filled in by the caller)."""
    lost_to_dead_workers: int = 0
    """How many of those failed because their worker process died on every attempt."""

    @property
    def hardware(self) -> str | None:
        return self.report.hardware

    @property
    def unscored_policy(self) -> str:
        return self.report.unscored_policy

    @property
    def sets(self) -> tuple[SetScore, ...]:
        return self.report.sets

    def as_json(self) -> dict:
        """summary.json: the report's policy and set entries, one entry per trace file, the run's errors."""
        return {
            "hardware": self.hardware,
            "unscored_policy": self.unscored_policy,
            "sets": [entry.model_dump(mode="json") for entry in self.sets],
            "problems": [entry.as_json() for entry in self.problems],
            "errors": self.errors,
            "lost_to_dead_workers": self.lost_to_dead_workers,
        }


def summarize(out: Path, hardware: str | None, baselines: Baselines | None = None) -> RunSummary:
    """The summary of the traces stored under `out`, scored on `hardware` (None: counts only)."""
    files = [(path, read_traces(path)) for path in TraceStore(out).all_trace_files()]
    return summarize_traces(
        [(path.parts[-3], path.parts[-2], path.stem, traces) for path, traces in files], hardware, baselines
    )


def summarize_traces(
    stored: list[tuple[str, str, str, list[Trace]]], hardware: str | None, baselines: Baselines | None = None
) -> RunSummary:
    """The summary of (set, problem, solution name, traces), one per trace file of a run; T_SOL is what each
    trace records (a run attaches it as it goes)."""
    sets = {trace.definition: set_name for set_name, _, _, traces in stored for trace in traces}
    report = score_traces([t for *_, traces in stored for t in traces], hardware, baselines=baselines, sets=sets)
    return RunSummary(
        report=report,
        problems=[
            _entry(report, set_name, problem, solution, traces) for set_name, problem, solution, traces in stored
        ],
    )


def _entry(report: ScoreReport, set_name: str, problem: str, solution: str, traces: list[Trace]) -> RunEntry:
    scored = report.problem(traces[0].definition, traces[0].solution) if traces else None
    if scored is None:  # a file without traces: nothing to score
        scored = ProblemScore(
            set=set_name,
            definition=problem,
            workloads=0,
            passed=0,
            scored=0,
            unscored=0,
            score=None,
            latency_ms=None,
            statuses={},
        )
    return RunEntry(set=set_name, problem=scored.definition, solution=solution, result=scored)


def write_summary(out: Path, summary: RunSummary) -> Path:
    path = Path(out) / "summary.json"
    path.parent.mkdir(parents=True, exist_ok=True)  # a run whose every job failed wrote no traces there
    path.write_text(json.dumps(summary.as_json(), indent=1) + "\n")
    return path
