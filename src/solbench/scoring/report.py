"""The typed result of scoring traces: per workload, per problem, per set, and the policy applied."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

UnscoredPolicy = Literal["exclude"]
UNSCORED_POLICY: UnscoredPolicy = "exclude"
"""What a PASSED workload without T_SOL or T_b does to its problem's score: it has no S and is left out
of the mean (a failed workload still counts 0). The policy is recorded in every report and summary.json."""


SetMissing = Literal["zero", "exclude"]
"""How a set total counts a problem of the set that has no score (`aggregate.set_total`): ``exclude`` leaves it out
(the library's reports), ``zero`` counts it 0 (the service's leaderboards)."""
SET_MISSING_RULES: tuple[SetMissing, ...] = get_args(SetMissing)


class _Value(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, ser_json_inf_nan="strings")


class WorkloadScore(_Value):
    """The SOL score of one trace (one solution on one workload)."""

    definition: str
    """The problem's definition name."""
    workload: str
    """The workload uuid."""
    solution: str | None = None
    """The solution's name as the trace records it."""
    status: str
    """The trace's evaluation status (PASSED, RUNTIME_ERROR, …); IMPLAUSIBLE for a PASSED trace measured below
    the speed-of-light floor on the report's hardware, which is then a failure."""
    score: float | None
    """S in [0, 1]; 0 for a workload that did not pass (IMPLAUSIBLE included); None when it PASSED but has no T_SOL
    or no T_b (unscored: see `ScoreReport.unscored_policy`)."""
    t_kernel_ms: float | None
    """T_k, the solution's measured latency; None unless PASSED or IMPLAUSIBLE (where it is the evidence)."""
    t_baseline_ms: float | None
    """T_b, from the baselines file, else the reference timed in the same run; None when neither exists."""
    t_sol_ms: float | None
    """T_SOL on the report's hardware, from the trace's own record or from analysing the problem."""
    reference_t_sol_ms: float | None = None
    """A reference (published) T_SOL for this workload from the baselines file (its `sol_ms`); shown beside
    `t_sol_ms`, never used for S."""
    t_sol_ratio: float | None = None
    """`t_sol_ms` / `reference_t_sol_ms` where both are known and the reference is above 0."""
    baseline_source: str
    """Where T_b came from (a baselines entry's source, or ``reference timed in the same run``)."""
    bound: str | None = None
    """The roof that binds T_SOL (``memory``, ``matrix``, ``vector``, ``special``), where known."""
    floor_ms: float | None = None
    """The speed-of-light floor T_k was compared with, for an IMPLAUSIBLE workload: T_SOL x (1 - margin) less
    the timer's resolution (scoring/sol_score.py)."""
    implausible: bool = False
    """Status IMPLAUSIBLE (T_k below the speed-of-light floor: not scored, a failure), or a scored T_k below the
    timer's resolution: a measurement problem or a cheat."""
    note: str = ""
    """Why the score is what it is when it is not the plain formula (``not PASSED``, ``no T_SOL``, …)."""


class ProblemScore(_Value):
    """One solution on one problem: the mean S over its workloads and the geometric-mean latency."""

    set: str
    """The problem's set (spec.problem_set)."""
    definition: str
    """The problem's definition name."""
    solution: str | None = None
    """The solution's name as its traces record it."""
    workloads: int
    """Traces of this problem and solution."""
    passed: int
    """Of those, how many PASSED."""
    scored: int
    """Workloads counted in `score`: every failed one (as 0) and every PASSED one with an S."""
    unscored: int
    """Workloads left out of `score`: PASSED ones without T_SOL or T_b (every workload when no hardware is given)."""
    score: float | None
    """Mean S over the `scored` workloads, failures counting 0; None when no workload counts."""
    latency_ms: float | None
    """Geometric mean of T_k over the workloads; None unless every workload PASSED (a mean over the
    workloads that passed would flatter a solution that fails the slow ones)."""
    statuses: dict[str, int]
    """How many workloads ended in each status."""


class SetScore(_Value):
    """A set of problems: the mean of its problems' scores."""

    set: str
    """The set's name (a ``set:NAME`` tag, the suite folder, or ``all``)."""
    problems: int
    """Problem entries in the set (one per problem and solution)."""
    problems_passed: int
    """Problems whose every workload PASSED."""
    workloads: int
    """Workloads over all its problems."""
    workloads_passed: int
    """Of those, how many PASSED."""
    scored_problems: int
    """Problems with a score."""
    score: float | None
    """The set total (`aggregate.set_total`) over the problems' scores under `missing`: with ``exclude`` the mean
    over the `scored_problems`, None when no problem has a score; with ``zero`` the mean over every problem."""
    missing: SetMissing = "exclude"
    """How `score` counts a problem without a score: ``exclude`` leaves it out, ``zero`` counts it 0."""


class ScoreReport(_Value):
    """Scores of a set of traces on one hardware, from `score_traces` (the one aggregation every command uses)."""

    hardware: str | None
    """The hardware whose T_SOL the scores use; None when none was given (nothing is scored then)."""
    unscored_policy: UnscoredPolicy = UNSCORED_POLICY
    """How PASSED workloads without T_SOL or T_b count: ``exclude`` leaves them out of every mean."""
    workloads: tuple[WorkloadScore, ...]
    """One entry per trace, in the order given."""
    problems: tuple[ProblemScore, ...]
    """One entry per (definition, solution), sorted by set, definition and solution."""
    sets: tuple[SetScore, ...]
    """One entry per set, sorted by name."""

    def problem(self, definition: str, solution: str | None = None) -> ProblemScore | None:
        """The entry of `definition` (and `solution`, when given), or None."""
        return next(
            (p for p in self.problems if p.definition == definition and (solution is None or p.solution == solution)),
            None,
        )

    def as_json(self) -> dict:
        return self.model_dump(mode="json")
