"""The one aggregation: S per workload, mean per problem (failures count 0), a total per set.

`solbench score`, `solbench run`'s summary and the Python API all reach these numbers through
`aggregate`, so they cannot disagree. Unscored workloads (PASSED without T_SOL or T_b) follow
`UNSCORED_POLICY`: they have no S and are left out of the means. A set's total follows `set_total`, the one
set-total rule, which the service's leaderboards use too: its `missing` argument says how a problem without a
score counts (the library's reports leave it out, the service's leaderboards count it 0), and every report
records which applied.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from solbench.scoring.baselines import Baselines
from solbench.scoring.report import (
    SET_MISSING_RULES,
    UNSCORED_POLICY,
    ProblemScore,
    ScoreReport,
    SetMissing,
    SetScore,
    WorkloadScore,
)
from solbench.scoring.sol_score import below_floor, mean_score, sol_floor_ms, sol_score
from solbench.spec.problem_set import DEFAULT_SET
from solbench.spec.trace import EvaluationStatus, Trace

PASSED = EvaluationStatus.PASSED.value
IMPLAUSIBLE = EvaluationStatus.IMPLAUSIBLE.value
SAME_RUN_REFERENCE = "reference timed in the same run"


def score_trace(
    trace: Trace, t_sol_ms: float | None, baselines: Baselines | None, hardware: str | None, bound: str | None = None
) -> WorkloadScore:
    """S of one trace. T_b comes from `baselines` where it has this workload on `hardware`, else from the
    trace's own reference timing. Without `hardware` nothing is scored (S None).

    A PASSED trace measured below the speed-of-light floor on `hardware` (sol_score.below_floor) is not
    scored: its status here is IMPLAUSIBLE, S 0 (a failure), with T_k, T_SOL, the floor and `bound` (the
    binding roof, where the caller knows it) as the evidence. A trace already IMPLAUSIBLE (eval --hardware)
    is the same failure.
    """
    evaluation = trace.evaluation
    baseline = baselines.get(trace.definition, trace.workload.uuid, hardware) if baselines and hardware else None
    performance = evaluation.performance if evaluation else None
    t_baseline = (
        baseline.latency_ms if baseline else (performance.reference_latency_ms or None if performance else None)
    )
    status = evaluation.status.value if evaluation else "NOT_EVALUATED"
    reference_sol = baseline.sol_ms if baseline else None
    details = evaluation.solbench if evaluation else None
    recorded = details.sol if details else None
    if bound is None and recorded is not None and hardware and recorded.hardware.upper() == hardware.upper():
        bound = recorded.bound
    common: dict[str, Any] = dict(
        definition=trace.definition,
        workload=trace.workload.uuid,
        solution=trace.solution,
        t_sol_ms=t_sol_ms,
        t_baseline_ms=t_baseline,
        bound=bound,
        baseline_source=baseline.source if baseline else SAME_RUN_REFERENCE,
        reference_t_sol_ms=reference_sol,
        t_sol_ratio=t_sol_ms / reference_sol if t_sol_ms is not None and reference_sol else None,
    )
    if hardware is None:
        return WorkloadScore(
            score=None,
            t_kernel_ms=performance.latency_ms if performance else None,
            note="no hardware given",
            status=status,
            **common,
        )
    if status == IMPLAUSIBLE and performance is not None:
        floor = recorded.floor_ms if recorded else None
        return WorkloadScore(
            score=0.0,
            t_kernel_ms=performance.latency_ms,
            implausible=True,
            floor_ms=floor,
            note=(details.failure if details and details.failure else "below the speed-of-light floor"),
            status=status,
            **common,
        )
    if status != PASSED or evaluation is None or performance is None:
        return WorkloadScore(score=0.0, t_kernel_ms=None, note="not PASSED", status=status, **common)
    timing = details.timing if details else None
    resolution = timing.resolution_ms if timing else None
    if t_sol_ms is not None:
        refused = below_floor(performance.latency_ms, t_sol_ms, hardware, resolution)
        if refused:
            return WorkloadScore(
                score=0.0,
                t_kernel_ms=performance.latency_ms,
                implausible=True,
                floor_ms=sol_floor_ms(t_sol_ms, hardware, resolution),
                note=refused + (f", {bound}-bound" if bound else ""),
                status=IMPLAUSIBLE,
                **common,
            )
    if t_sol_ms is None or not t_baseline:
        return WorkloadScore(
            score=None,
            t_kernel_ms=performance.latency_ms,
            status=status,
            note="unscored: no T_SOL" if t_sol_ms is None else "unscored: no baseline",
            **common,
        )
    result = sol_score(performance.latency_ms, t_baseline, t_sol_ms)
    implausible, note = False, result.note
    if timing is not None and timing.below_resolution:
        implausible, note = (
            True,
            (f"T_k {timing.median_ms:.4g} ms below the timer's resolution ({timing.resolution_ms:.4g} ms)"),
        )
    return WorkloadScore(
        score=result.score,
        t_kernel_ms=performance.latency_ms,
        implausible=implausible,
        note=note,
        status=status,
        **common,
    )


def aggregate(
    scores: Iterable[WorkloadScore],
    hardware: str | None,
    sets: Mapping[str, str] | None = None,
    *,
    missing: SetMissing = "exclude",
) -> ScoreReport:
    """Per-problem and per-set scores of `scores`; `sets` maps a definition name to its set (default ``all``).

    A problem is one (definition, solution) pair. Its S is the mean over its workloads that count (failed
    ones as 0, PASSED ones with an S); a set's S is `set_total` over its problems under `missing` (default
    ``exclude``: the mean over its problems that have an S), recorded in each set's entry.
    """
    workloads = tuple(scores)
    groups: dict[tuple[str, str, str | None], list[WorkloadScore]] = defaultdict(list)
    for item in workloads:
        set_name = (sets or {}).get(item.definition, DEFAULT_SET)
        groups[(set_name, item.definition, item.solution)].append(item)
    problems = tuple(_problem_score(key, groups[key]) for key in sorted(groups, key=_sort_key))
    by_set: dict[str, list[ProblemScore]] = defaultdict(list)
    for problem in problems:
        by_set[problem.set].append(problem)
    return ScoreReport(
        hardware=hardware,
        unscored_policy=UNSCORED_POLICY,
        workloads=workloads,
        problems=problems,
        sets=tuple(_set_score(name, items, missing) for name, items in sorted(by_set.items())),
    )


def _sort_key(key: tuple[str, str, str | None]) -> tuple[str, str, str]:
    return key[0], key[1], key[2] or ""


def _problem_score(key: tuple[str, str, str | None], group: list[WorkloadScore]) -> ProblemScore:
    set_name, definition, solution = key
    counted = [s.score for s in group if s.score is not None]  # failed: 0; unscored (the policy): left out
    passed = sum(s.status == PASSED for s in group)
    return ProblemScore(
        set=set_name,
        definition=definition,
        solution=solution,
        workloads=len(group),
        passed=passed,
        scored=len(counted),
        unscored=len(group) - len(counted),
        score=mean_score(counted) if counted else None,
        latency_ms=geometric_mean([s.t_kernel_ms if s.status == PASSED else None for s in group]),
        statuses=dict(sorted(Counter(s.status for s in group).items())),
    )


def _set_score(name: str, problems: list[ProblemScore], missing: SetMissing) -> SetScore:
    return SetScore(
        set=name,
        problems=len(problems),
        problems_passed=sum(p.passed == p.workloads for p in problems),
        workloads=sum(p.workloads for p in problems),
        workloads_passed=sum(p.passed for p in problems),
        scored_problems=sum(p.score is not None for p in problems),
        score=set_total([p.score for p in problems], missing=missing),
        missing=missing,
    )


def set_total(scores: Iterable[float | None], *, missing: SetMissing) -> float | None:
    """The one set-total rule: the mean over a set's problems of their scores, given one per problem of the set
    (None for a problem without a score). `missing` says how such a problem counts, and has no default, so
    every caller states its rule:

    - ``exclude`` (the library's score reports, `run`'s summary): it is left out; None when no problem has a score;
    - ``zero`` (the service's leaderboards): it counts 0, so the mean is over every problem; None for no problems.
    """
    if missing not in SET_MISSING_RULES:
        raise ValueError(f"missing={missing!r}: unknown set-total rule (known: {', '.join(SET_MISSING_RULES)})")
    scores = list(scores)
    counted = [s for s in scores if s is not None] if missing == "exclude" else [s or 0.0 for s in scores]
    return mean_score(counted) if counted else None


def geometric_mean(latencies_ms: Sequence[float | None]) -> float | None:
    """Geometric mean, None when the list is empty or any value is missing; 0 when any value is 0."""
    values = [value for value in latencies_ms if value is not None]
    if not values or len(values) < len(latencies_ms):
        return None
    if any(value <= 0 for value in values):
        return 0.0
    return math.exp(sum(math.log(value) for value in values) / len(values))
