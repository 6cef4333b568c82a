"""A result's scores from its traces, T_SOL and T_b: the library's one aggregation, used when a job finishes
and when `solbench admin rescore` re-scores stored traces without running them."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from solbench.scoring import Baseline, Baselines, aggregate, score_trace
from solbench.spec import Trace
from solbench.spec.trace import EvaluationStatus

IMPLAUSIBLE = EvaluationStatus.IMPLAUSIBLE.value
REWARD_HACK = EvaluationStatus.REWARD_HACK.value
PASSED = EvaluationStatus.PASSED.value
HACKED_VERDICTS = (REWARD_HACK, IMPLAUSIBLE)
"""Verdicts that make a ranked submission hacked without an admin: a guard's flag and the speed-of-light floor."""

BASELINE_SOURCE = "imported baselines file"


@dataclass(frozen=True)
class ResultScores:
    score: float | None
    """S over every workload that counts (public, and held-out for ranked submissions)."""
    public_score: float | None
    held_out_score: float | None
    held_out_passed: bool
    """The secret held-out run passed (`held_out_run_passed`): without it the score is not ranked."""
    verdict: str
    """PASSED when every workload passed, else the first other status; REWARD_HACK when a guard flagged some
    workload, IMPLAUSIBLE when some workload was measured below the speed-of-light floor on the worker's hardware:
    either makes the submission hacked (hacked.py), whatever else failed first."""
    t_b_ms: dict[str, float | None]
    """T_b used per workload uuid (an imported baseline, else the reference timed in the same run)."""


def verdict_of(traces: list[Trace]) -> str:
    """A guard's REWARD_HACK on any workload wins over an earlier ordinary failure: the verdict is what hides a
    hacked submission from the boards, so a wrong answer on one workload must not mask a cheat on another."""
    statuses = [t.evaluation.status.value if t.evaluation else "NOT_EVALUATED" for t in traces]
    if REWARD_HACK in statuses:
        return REWARD_HACK
    return next((s for s in statuses if s != PASSED), PASSED)


def held_out_run_passed(held_out: list[Trace], held_out_workloads: Collection[str]) -> bool:
    """THE held-out rule: a ranked score counts only once its secret held-out run has passed, i.e. every held-out
    workload of the version (`held_out_workloads`, uuids) has a trace and each one PASSED. A run not made yet, one
    that missed a workload, and one with any failure do not pass; a version that holds nothing out (data-file
    workloads cannot be varied, or `held_out_per_problem` is 0) passes with nothing to run. queries.py ranks
    only results where this held (`Result.held_out_passed`)."""
    statuses = {t.workload.uuid: t.evaluation.status.value if t.evaluation else None for t in held_out}
    return all(statuses.get(uuid) == PASSED for uuid in held_out_workloads)


def score_result(
    traces: list[Trace],
    held_out: list[Trace],
    t_sol_ms: dict[str, float],
    t_b_ms: dict[str, float],
    hardware: str,
    *,
    held_out_workloads: Collection[str] = (),
    scored: bool = True,
) -> ResultScores:
    """Scores of one submission; `scored=False` (mode test) keeps only the verdict. `held_out_workloads` are the
    uuids of the held-out workloads of the version it was measured on (`held_out_run_passed`).

    A submission with a workload measured below the speed-of-light floor (IMPLAUSIBLE, public or held out) has
    no score at all, so it is never ranked: stricter than counting that workload 0, which would still rank the
    submission on its other workloads."""
    verdict = verdict_of(traces + held_out)
    passed = held_out_run_passed(held_out, held_out_workloads)
    if not scored:
        return ResultScores(None, None, None, passed, verdict, {})
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
        return ResultScores(None, None, None, passed, IMPLAUSIBLE, t_b)

    def problem_score(items) -> float | None:
        if not items:
            return None
        problems = aggregate(items, hardware).problems
        return problems[0].score if problems else None

    return ResultScores(
        score=problem_score(public + hidden),
        public_score=problem_score(public),
        held_out_score=problem_score(hidden),
        held_out_passed=passed,
        verdict=verdict,
        t_b_ms=t_b,
    )
