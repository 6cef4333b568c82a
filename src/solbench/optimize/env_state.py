"""What an environment has learnt and spent, as one JSON-serialisable record: a store keeps it between calls.

The leaderboard service's environments live in its database, and each call may run on another worker;
`Env.snapshot()` writes this record after a call and `Env.resume(state)` continues from it, so every decision
(budget, best, reward, history) is still the library's, made from the same facts.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from solbench.optimize.budget import BudgetLeft
from solbench.optimize.results import StepResult


class WorkloadTimes(BaseModel):
    """The two times a candidate is judged between on one workload, worked out once per environment."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    t_sol_ms: float
    bound: str
    t_b_ms: float | None
    t_b_source: str


class EnvState(BaseModel):
    """An environment's history, spending, T_SOL and T_b, and seed: all `Env.resume` needs besides its settings."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True, ser_json_inf_nan="strings")

    problem: str
    reward: str
    results: list[StepResult] = []
    """Every stepped candidate, in order."""
    spent: BudgetLeft = BudgetLeft()
    """What the ledger used (its limits come from the environment's Budget, not from here)."""
    times: dict[str, WorkloadTimes] = {}
    """workload uuid -> its times; a workload missing here is analysed (and its reference timed) when needed."""
    seed: int | None = None
