"""A result's scores from its traces, T_SOL and T_b: the library's one aggregation, used when a job finishes
and when `solbench admin rescore` re-scores stored traces without running them."""

from __future__ import annotations

from dataclasses import dataclass

from solbench.scoring import Baseline, Baselines, aggregate, score_trace
from solbench.spec import Trace
from solbench.spec.trace import EvaluationStatus

IMPLAUSIBLE = EvaluationStatus.IMPLAUSIBLE.value

BASELINE_SOURCE = "imported baselines file"


@dataclass(frozen=True)
class ResultScores:
    score: float | None
    """S over every workload that counts (public, and held-out for ranked submissions)."""
    public_score: float | None
    held_out_score: float | None
    verdict: str
    """PASSED when every workload passed, else the first other status; IMPLAUSIBLE when some workload was
    measured below the speed-of-light floor on the worker's hardware."""
    t_b_ms: dict[str, float | None]
    """T_b used per workload uuid (an imported baseline, else the reference timed in the same run)."""


def verdict_of(traces: list[Trace]) -> str:
    statuses = [t.evaluation.status.value if t.evaluation else "NOT_EVALUATED" for t in traces]
    return next((s for s in statuses if s != "PASSED"), "PASSED")


def score_result(
    traces: list[Trace],
    held_out: list[Trace],
    t_sol_ms: dict[str, float],
    t_b_ms: dict[str, float],
    hardware: str,
    *,
    scored: bool = True,
) -> ResultScores:
    """Scores of one submission; `scored=False` (mode test) keeps only the verdict.

    A submission with a workload measured below the speed-of-light floor (IMPLAUSIBLE, public or held out) has
    no score at all, so it is never ranked: stricter than counting that workload 0, which would still rank the
    submission on its other workloads."""
    verdict = verdict_of(traces + held_out)
    if not scored:
        return ResultScores(None, None, None, verdict, {})
    definition = traces[0].definition if traces else ""
    baselines = Baselines(
        [
            Baseline(definition=definition, workload=uuid, hardware=hardware, latency_ms=ms, source=BASELINE_SOURCE)
            for uuid, ms in t_b_ms.items()
        ]
    )
    public = [score_trace(t, t_sol_ms.get(t.workload.uuid), baselines, hardware) for t in traces]
    hidden = [score_trace(t, t_sol_ms.get(t.workload.uuid), baselines, hardware) for t in held_out]
    t_b = {s.workload: s.t_baseline_ms for s in public + hidden}
    if any(s.status == IMPLAUSIBLE for s in public + hidden):
        return ResultScores(None, None, None, IMPLAUSIBLE, t_b)

    def problem_score(items) -> float | None:
        if not items:
            return None
        problems = aggregate(items, hardware).problems
        return problems[0].score if problems else None

    return ResultScores(
        score=problem_score(public + hidden),
        public_score=problem_score(public),
        held_out_score=problem_score(hidden),
        verdict=verdict,
        t_b_ms=t_b,
    )
