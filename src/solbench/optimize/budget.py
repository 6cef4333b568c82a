"""The budget ledger: what an agent may still spend on evaluations, tests and seconds of measuring.

A cache hit costs nothing: it measured nothing. The ledger belongs to one environment (or to one
MCP server, shared by the environments it opens); nothing here is global.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from solbench.optimize.errors import BudgetExhausted, InvalidBudget

Spend = Literal["eval", "test"]


@dataclass(frozen=True)
class Budget:
    """Limits for one environment; None means unlimited. `seconds` counts the wall time of evaluations and tests
    that measured (not cache hits, not the environment's own reference timing or `finalize`)."""

    evals: int | None = None
    tests: int | None = None
    seconds: float | None = None

    def __post_init__(self) -> None:
        for name in ("evals", "tests"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise InvalidBudget(name, value)
        seconds = self.seconds
        if seconds is not None and (
            isinstance(seconds, bool)
            or not isinstance(seconds, (int, float))
            or not math.isfinite(seconds)
            or seconds < 0
        ):
            raise InvalidBudget("seconds", seconds)


class BudgetLeft(BaseModel):
    """What is left and what was used; a None limit is unlimited."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    evals: int | None = None
    """Evaluations (env.step that measured) still allowed; None: unlimited."""
    tests: int | None = None
    """Tests (env.test that measured) still allowed; None: unlimited."""
    seconds: float | None = None
    """Seconds of measuring still allowed; None: unlimited."""
    evals_used: int = 0
    tests_used: int = 0
    seconds_used: float = 0.0
    cache_hits: int = 0
    """Evaluations and tests answered by the result cache, which cost nothing."""
    exhausted: bool = False
    """No evaluation may run any more (env.step raises BudgetExhausted)."""


class BudgetLedger:
    """Charges evaluations and tests against a Budget; share one ledger to share one budget. Calls running at once
    (threads stepping one environment, environments sharing a ledger) each hold a place while they run, so together
    they cannot pass a limit that each would pass alone."""

    def __init__(self, budget: Budget | None = None):
        self.budget = budget or Budget()
        self.evals_used = self.tests_used = self.cache_hits = 0
        self.seconds_used = 0.0
        self._running: dict[Spend, int] = {"eval": 0, "test": 0}
        self._lock = threading.Lock()

    @contextmanager
    def spending(self, kind: Spend) -> Iterator[Callable[[float, bool], None]]:
        """Hold a `kind` call's place in the budget while the block runs (BudgetExhausted, before it, where none is
        left); the block settles it by calling what it is given with the seconds measured and whether the cache
        answered. A block that ends without settling (its evaluation raised) gives the place back, charging nothing."""
        holding = False

        def settle(seconds: float, cache_hit: bool) -> None:
            nonlocal holding
            with self._lock:
                if holding:
                    holding = False
                    self._running[kind] -= 1
                    self.charge(kind, seconds, cache_hit)

        try:
            with self._lock:
                self.check(kind)
                self._running[kind] += 1
                holding = True
            yield settle
        finally:
            with self._lock:
                if holding:
                    holding = False
                    self._running[kind] -= 1

    def check(self, kind: Spend) -> None:
        """Raise BudgetExhausted when a `kind` call may not start now (calls still running hold their places)."""
        refusal = self._refusal(kind, self._running[kind])
        if refusal is not None:
            raise BudgetExhausted("evaluation" if kind == "eval" else "test", refusal)

    def _refusal(self, kind: Spend, running: int) -> str | None:
        """What is used up for a `kind` call, counting `running` calls as using their places; None where it may run."""
        limit, used = (self.budget.evals, self.evals_used) if kind == "eval" else (self.budget.tests, self.tests_used)
        noun = "evaluation" if kind == "eval" else "test"
        if limit is not None and used + running >= limit:
            held = f", {running} more running" if running else ""
            return f"{used} of {limit} {noun}s used{held}"
        if self.budget.seconds is not None and self.seconds_used >= self.budget.seconds:
            return f"{self.seconds_used:.1f} s of {self.budget.seconds:g} s measuring used"
        return None

    def resume(self, spent: BudgetLeft) -> None:
        """Continue from what another ledger of the same Budget used (an environment restored from a store)."""
        self.evals_used, self.tests_used = spent.evals_used, spent.tests_used
        self.seconds_used, self.cache_hits = spent.seconds_used, spent.cache_hits

    def charge(self, kind: Spend, seconds: float, cache_hit: bool) -> None:
        if cache_hit:
            self.cache_hits += 1
            return
        if kind == "eval":
            self.evals_used += 1
        else:
            self.tests_used += 1
        self.seconds_used += max(seconds, 0.0)

    @property
    def exhausted(self) -> bool:
        """No further evaluation may run, by what was used (a call still running may yet give its place back)."""
        return self._refusal("eval", 0) is not None

    def left(self) -> BudgetLeft:
        budget = self.budget
        return BudgetLeft(
            evals=None if budget.evals is None else max(budget.evals - self.evals_used, 0),
            tests=None if budget.tests is None else max(budget.tests - self.tests_used, 0),
            seconds=None if budget.seconds is None else max(budget.seconds - self.seconds_used, 0.0),
            evals_used=self.evals_used,
            tests_used=self.tests_used,
            seconds_used=round(self.seconds_used, 3),
            cache_hits=self.cache_hits,
            exhausted=self.exhausted,
        )
