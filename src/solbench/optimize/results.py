"""What the environment returns: typed, JSON-serialisable records an agent (or a journal) keeps."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from solbench.optimize.budget import BudgetLeft
from solbench.optimize.feedback import WorkloadFeedback
from solbench.spec.solution import Solution
from solbench.spec.trace import Trace


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True, ser_json_inf_nan="strings")


class StepInfo(_Result):
    candidate_id: int
    """1, 2, … in the order candidates were stepped (restored ones included)."""
    cache_hit: bool
    """The result cache answered: nothing was measured and no budget was charged."""
    cache_key: str | None = None
    """The result cache's key of this evaluation (None without a cache)."""
    flagged_cheat: bool
    """Some workload ended REWARD_HACK: recorded, rewarded as a failure, never `best`."""
    correct: bool
    """Every public workload PASSED."""
    is_best: bool
    """This candidate is now `env.best`."""
    seconds: float
    """Wall time of this step's evaluation (a cache hit's is the time to read it)."""
    budget_left: BudgetLeft


class StepResult(_Result):
    """What `env.step` returns; `env.restore` takes a list of these back."""

    problem: str
    reward_kind: str
    reward: float
    feedback: list[WorkloadFeedback]
    """One entry per public workload, in the card's order."""
    done: bool
    """The budget allows no further evaluation."""
    info: StepInfo
    solution: Solution
    """The candidate as evaluated (so a journal of StepResults can restore `best`)."""


class Candidate(_Result):
    """One stepped candidate, as `env.history` and `env.best` hold it."""

    candidate_id: int
    solution: Solution
    reward: float
    correct: bool
    flagged_cheat: bool
    cache_hit: bool
    cache_key: str | None = None
    feedback: list[WorkloadFeedback]

    @classmethod
    def of(cls, result: StepResult) -> Candidate:
        info = result.info
        return cls(
            candidate_id=info.candidate_id,
            solution=result.solution,
            reward=result.reward,
            correct=info.correct,
            flagged_cheat=info.flagged_cheat,
            cache_hit=info.cache_hit,
            cache_key=info.cache_key,
            feedback=result.feedback,
        )


class TestStatus(_Result):
    workload: str
    status: str
    failed_rule: str | None = None
    error: str | None = None
    same_error_as: str | None = None
    input_seed: int | None = None
    """The seed the inputs came from: `env.test(solution, seed=this, workload=...)` replays them."""
    log: str | None = None
    """A passing workload's log, bounded (see WorkloadFeedback.log)."""
    same_log_as: str | None = None


class TestResult(_Result):
    """What `env.test` returns: correctness only, on the smallest public workloads; never scored, never best."""

    __test__ = False  # not a pytest class

    passed: bool
    """Every tested workload PASSED."""
    workloads: list[TestStatus]
    cache_hit: bool
    seconds: float
    budget_left: BudgetLeft


class FinalResult(_Result):
    """What `env.finalize` returns: the best candidate re-measured, with a fresh input seed and no cache."""

    problem: str
    candidate_id: int | None
    """The candidate this result is of: the best, or the next best correct one that passed where the best failed
    (`tried`); None when no candidate was correct (nothing was measured)."""
    solution: Solution | None = None
    reward_kind: str
    reward: float
    """The reward over public and held-out workloads together."""
    public_reward: float
    held_out_reward: float | None = None
    """The reward over the held-out workloads alone; None when there are none."""
    correct: bool
    """Every workload, held-out included, PASSED in the re-measurement."""
    flagged_cheat: bool
    feedback: list[WorkloadFeedback]
    """Every workload, held-out ones included, in the problem's order."""
    held_out: list[str]
    """The held-out workload uuids, revealed now."""
    traces: list[Trace]
    """The re-measurement's traces, for storing beside a run."""
    tried: list[int] = []
    """The candidates re-measured, in order: the best first, then each next best correct one while the one before
    failed (a held-out workload, say). The last is this result's unless none passed (then it is the best's)."""
    note: str = ""
    """Why the result is not simply the best's: no correct candidate, or which candidates failed before it."""
