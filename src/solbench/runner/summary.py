"""A run's results read back from its trace files: pass counts and SOL scores per problem and set.

Everything is recomputed from the stored traces, so a resumed or partly failed run summarises
the same way as a clean one.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from solbench.evaluate.sol_scoring import read_traces, recorded_t_sol
from solbench.runner.store import TraceStore
from solbench.score import Baselines, score_trace
from solbench.score.sol_score import mean_score
from solbench.spec.trace import EvaluationStatus


@dataclass
class ProblemSummary:
    set: str
    problem: str
    solution: str
    workloads: int
    passed: int
    statuses: dict[str, int]
    score: float | None
    """Mean SOL score over workloads (failures count 0); None where no workload has T_SOL and T_b."""
    scored: int = 0


@dataclass
class SetSummary:
    set: str
    problems: int = 0
    problems_passed: int = 0
    """Problems whose every workload PASSED."""
    workloads: int = 0
    workloads_passed: int = 0
    score: float | None = None


@dataclass
class RunSummary:
    hardware: str | None
    problems: list[ProblemSummary] = field(default_factory=list)
    sets: list[SetSummary] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """This run's jobs that wrote no traces, as ``set/problem/solution: why`` (filled in by the caller)."""
    lost_to_dead_workers: int = 0
    """How many of those failed because their worker process died on every attempt."""

    def as_json(self) -> dict:
        return {"hardware": self.hardware, "sets": [asdict(s) for s in self.sets],
                "problems": [asdict(p) for p in self.problems], "errors": self.errors,
                "lost_to_dead_workers": self.lost_to_dead_workers}


def summarize(out: Path, hardware: str | None, baselines: Baselines | None = None) -> RunSummary:
    summary = RunSummary(hardware=hardware)
    for path in TraceStore(out).all_trace_files():
        set_name, problem, solution = path.parts[-3], path.parts[-2], path.stem
        traces = read_traces(path)
        statuses = Counter(t.evaluation.status.value for t in traces)
        scores = [score_trace(t, recorded_t_sol(t, hardware), baselines, hardware) for t in traces] if hardware else []
        # A failed workload scores 0; a passed one needs T_SOL and T_b to score at all.
        scored = [s for s in scores if s.status != EvaluationStatus.PASSED.value
                  or (s.t_sol_ms is not None and s.t_baseline_ms)]
        summary.problems.append(ProblemSummary(
            set=set_name, problem=problem, solution=solution, workloads=len(traces),
            passed=statuses.get(EvaluationStatus.PASSED.value, 0), statuses=dict(statuses),
            score=mean_score([s.score for s in scored]) if scored else None, scored=len(scored)))
    groups: dict[str, list[ProblemSummary]] = defaultdict(list)
    for item in summary.problems:
        groups[item.set].append(item)
    for set_name, items in sorted(groups.items()):
        scores = [p.score for p in items if p.score is not None]
        summary.sets.append(SetSummary(
            set=set_name, problems=len(items), problems_passed=sum(p.passed == p.workloads for p in items),
            workloads=sum(p.workloads for p in items), workloads_passed=sum(p.passed for p in items),
            score=mean_score(scores) if scores else None))
    return summary


def write_summary(out: Path, summary: RunSummary) -> Path:
    path = Path(out) / "summary.json"
    path.write_text(json.dumps(summary.as_json(), indent=1) + "\n")
    return path
