"""Agent metrics over rollouts: fast_p, pass@k and mean S with held-out workloads, per problem and per set.

The definitions (docs/optimize.md#agent-metrics-solbench-report), for a rollout (one optimize run or env history):

- Its final solution is the candidate `env.finalize` re-measured on every workload, held-out ones included.
  It is *correct* when that re-measurement passed every workload and flagged nothing. A rollout without a
  final re-measurement (not finalized, or no correct candidate) has no correct final solution.
- Its speedup is the geometric mean over the final re-measurement's workloads of T_b / T_k: T_b the env's
  baseline for the workload (the baselines file's entry, else the reference timed once by the env, as the
  card says in `t_b_source`), T_k the re-measured median latency. Workloads without a T_b are left out.
- fast_p (KernelBench): the share of rollouts whose final solution is correct and whose speedup is > p.
- pass@k (Chen et al. 2021): over a problem's n evaluated candidates (every rollout's steps together), of
  which c are correct, 1 - C(n - c, k) / C(n, k). A candidate is correct when it passed every public workload
  unflagged and, where it was re-measured by `finalize`, every workload there too. Undefined for n < k.
- mean S: the final solution's SOL score over every workload, held-out ones included; 0 when it is not correct.

A set's value is the mean of its problems' values, so each problem weighs the same however many rollouts it has;
pass@k's mean is over the problems with at least k candidates.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby

from pydantic import BaseModel, ConfigDict

from solbench.optimize.errors import InvalidMetricOption
from solbench.optimize.trajectory import Trajectory, TrajectoryStep
from solbench.scoring import geometric_mean, mean_score

DEFAULT_FAST_P = (1.0, 1.2, 2.0)
DEFAULT_PASS_K = (1, 5, 10)


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The unbiased estimate of pass@k from n samples of which c are correct; None when n < k (not estimable)."""
    if k < 1 or n < 0 or not 0 <= c <= n:
        raise InvalidMetricOption("pass@k", (n, c, k), "needs k >= 1 and 0 <= c <= n")
    if n < k:
        return None
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)  # exact integers: no overflow, one rounding


@dataclass(frozen=True)
class RolloutOutcome:
    """What the metrics read from one rollout."""

    set: str
    problem: str
    samples: int
    """Evaluated candidates."""
    correct_samples: int
    finalized: bool
    final_correct: bool
    final_speedup: float | None
    """Geometric mean of T_b / T_k over the final re-measurement's workloads; None when not correct."""
    final_score: float
    """Mean S over every workload, held-out included; 0 when the final solution is not correct."""


def rollout_outcome(trajectory: Trajectory) -> RolloutOutcome:
    final = trajectory.final
    final_correct = bool(
        final is not None and final.candidate_id is not None and final.correct and not final.flagged_cheat
    )
    speedup = score = None
    if final is not None and final_correct:
        speedup = geometric_mean([f.speedup for f in final.feedback if f.speedup is not None])
        score = mean_score([f.score for f in final.feedback if f.score is not None])
    evaluated = [step for step in trajectory.steps if step.evaluated]
    return RolloutOutcome(
        set=trajectory.set,
        problem=trajectory.problem,
        samples=len(evaluated),
        correct_samples=sum(_sample_correct(trajectory, step) for step in evaluated),
        finalized=final is not None,
        final_correct=final_correct,
        final_speedup=speedup,
        final_score=score or 0.0,
    )


def _sample_correct(trajectory: Trajectory, step: TrajectoryStep) -> bool:
    info = step.info
    if info is None or not info.correct or info.flagged_cheat:
        return False
    final = trajectory.final
    if final is not None and step.candidate == trajectory.final_candidate:  # held-out known: it must pass there too
        return final.correct and not final.flagged_cheat
    return True


class _Metrics(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class ProblemMetrics(_Metrics):
    set: str
    problem: str
    rollouts: int
    finalized: int
    """Rollouts with a final re-measurement."""
    final_correct: int
    """Rollouts whose final solution was correct on every workload, held-out included."""
    samples: int
    """n: evaluated candidates over all rollouts."""
    correct_samples: int
    """c: those correct (public workloads, and held-out where re-measured)."""
    fast_p: dict[str, float]
    """p (as written, e.g. ``1.2``) -> share of rollouts correct with speedup > p."""
    pass_at_k: dict[str, float | None]
    """k -> pass@k; None when n < k."""
    mean_score: float
    """Mean over rollouts of the final solution's S with held-out workloads (0 when not correct)."""
    best_speedup: float | None
    """The highest final speedup of a correct rollout."""


class SetMetrics(_Metrics):
    set: str
    problems: int
    rollouts: int
    fast_p: dict[str, float]
    """Mean over the set's problems."""
    pass_at_k: dict[str, float | None]
    """Mean over the problems with n >= k; None when none has."""
    pass_at_k_problems: dict[str, int]
    """How many problems each pass@k mean covers."""
    mean_score: float


class AgentMetrics(_Metrics):
    """What `solbench report` prints."""

    fast_p_thresholds: list[float]
    pass_k: list[int]
    problems: list[ProblemMetrics]
    sets: list[SetMetrics]


def agent_metrics(
    trajectories: Iterable[Trajectory], fast_p: Sequence[float] = DEFAULT_FAST_P, pass_k: Sequence[int] = DEFAULT_PASS_K
) -> AgentMetrics:
    """fast_p, pass@k and mean S per problem and per set over `trajectories` (several may be of one problem)."""
    thresholds = _checked_thresholds(fast_p)
    ks = _checked_ks(pass_k)
    outcomes = sorted((rollout_outcome(t) for t in trajectories), key=lambda o: (o.set, o.problem))
    problems = [
        _problem_metrics(list(group), thresholds, ks)
        for _, group in groupby(outcomes, key=lambda o: (o.set, o.problem))
    ]
    sets = [_set_metrics(name, list(group), thresholds, ks) for name, group in groupby(problems, key=lambda p: p.set)]
    return AgentMetrics(fast_p_thresholds=list(thresholds), pass_k=list(ks), problems=problems, sets=sets)


def _problem_metrics(outcomes: list[RolloutOutcome], thresholds: list[float], ks: list[int]) -> ProblemMetrics:
    n = sum(o.samples for o in outcomes)
    c = sum(o.correct_samples for o in outcomes)
    speedups = [o.final_speedup for o in outcomes if o.final_correct and o.final_speedup is not None]
    return ProblemMetrics(
        set=outcomes[0].set,
        problem=outcomes[0].problem,
        rollouts=len(outcomes),
        finalized=sum(o.finalized for o in outcomes),
        final_correct=sum(o.final_correct for o in outcomes),
        samples=n,
        correct_samples=c,
        fast_p={_key(p): sum(s > p for s in speedups) / len(outcomes) for p in thresholds},
        pass_at_k={str(k): pass_at_k(n, c, k) for k in ks},
        mean_score=sum(o.final_score for o in outcomes) / len(outcomes),
        best_speedup=max(speedups, default=None),
    )


def _set_metrics(name: str, problems: list[ProblemMetrics], thresholds: list[float], ks: list[int]) -> SetMetrics:
    estimable = {str(k): [v for p in problems if (v := p.pass_at_k[str(k)]) is not None] for k in ks}
    return SetMetrics(
        set=name,
        problems=len(problems),
        rollouts=sum(p.rollouts for p in problems),
        fast_p={_key(t): _mean([p.fast_p[_key(t)] for p in problems]) for t in thresholds},
        pass_at_k={k: _mean(values) if values else None for k, values in estimable.items()},
        pass_at_k_problems={k: len(values) for k, values in estimable.items()},
        mean_score=_mean([p.mean_score for p in problems]),
    )


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _key(threshold: float) -> str:
    return f"{threshold:g}"


def _checked_thresholds(values: Sequence[float]) -> list[float]:
    for value in values:
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise InvalidMetricOption("fast_p", value, "p must be a finite number above 0 (a speedup threshold)")
    return sorted(set(float(v) for v in values))


def _checked_ks(values: Sequence[int]) -> list[int]:
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidMetricOption("pass@k", value, "k must be a whole number of at least 1")
    return sorted(set(values))
