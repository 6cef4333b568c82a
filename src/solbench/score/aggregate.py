"""Scoring traces: S per workload, mean per problem (failures count 0), mean per set."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace

from solbench.score.baselines import Baselines
from solbench.score.sol_score import SolScore, mean_score, sol_score
from solbench.spec.trace import EvaluationStatus, Trace


@dataclass(frozen=True)
class WorkloadScore:
    definition: str
    workload: str
    status: str
    score: float
    t_kernel_ms: float | None
    t_baseline_ms: float | None
    t_sol_ms: float | None
    baseline_source: str
    implausible: bool = False
    note: str = ""


def score_trace(trace: Trace, t_sol_ms: float | None, baselines: Baselines | None, hardware: str) -> WorkloadScore:
    """T_b comes from the baselines file where it has this workload, else from the trace's own reference timing."""
    evaluation = trace.evaluation
    baseline = baselines.get(trace.definition, trace.workload.uuid, hardware) if baselines else None
    performance = evaluation.performance
    t_baseline = baseline.latency_ms if baseline else (performance.reference_latency_ms if performance else None)
    source = baseline.source if baseline else "reference timed in the same run"
    common = dict(definition=trace.definition, workload=trace.workload.uuid, status=evaluation.status.value,
                  t_sol_ms=t_sol_ms, t_baseline_ms=t_baseline, baseline_source=source)
    if evaluation.status is not EvaluationStatus.PASSED or performance is None:
        return WorkloadScore(score=0.0, t_kernel_ms=None, note="not PASSED", **common)
    if t_sol_ms is None or not t_baseline:
        return WorkloadScore(score=0.0, t_kernel_ms=performance.latency_ms,
                             note="no T_SOL" if t_sol_ms is None else "no baseline", **common)
    result: SolScore = sol_score(performance.latency_ms, t_baseline, t_sol_ms)
    timing = evaluation.solbench.timing if evaluation.solbench else None
    if timing is not None and timing.below_resolution:
        result = replace(result, implausible=True, note=f"T_k {timing.median_ms:.4g} ms below the timer's resolution "
                                                         f"({timing.resolution_ms:.4g} ms)")
    return WorkloadScore(score=result.score, t_kernel_ms=performance.latency_ms, implausible=result.implausible,
                         note=result.note, **common)


@dataclass(frozen=True)
class ProblemScore:
    definition: str
    score: float
    workloads: int
    passed: int


def by_problem(scores: list[WorkloadScore]) -> list[ProblemScore]:
    groups: dict[str, list[WorkloadScore]] = defaultdict(list)
    for score in scores:
        groups[score.definition].append(score)
    return [ProblemScore(definition=name, score=mean_score([s.score for s in group]), workloads=len(group),
                         passed=sum(s.status == EvaluationStatus.PASSED.value for s in group))
            for name, group in sorted(groups.items())]


def by_set(problems: list[ProblemScore], set_of: Callable[[str], str]) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    for problem in problems:
        groups[set_of(problem.definition)].append(problem.score)
    return {name: mean_score(values) for name, values in sorted(groups.items())}
