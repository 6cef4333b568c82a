"""Errors of the trusted evaluation layer."""

from __future__ import annotations

from typing import Any

from solbench.errors import SolbenchError


class EvaluationError(SolbenchError):
    """Evaluation could not go on as asked (a failing reference, a workload ended early); most become a trace
    status inside `evaluate` and never reach the caller."""


class HarnessOptionError(EvaluationError):
    """An evaluation option (EvaluationConfig field) has a value the harness cannot run with.

    Raised before any sandbox starts; what a solution does is never one (it becomes a trace status).
    `option` is the field's name (``timer``, ``timing.budget_s``), `value` the value given and
    `reason` what is wrong with it, so a front end can name its own flag.
    """

    def __init__(self, option: str, value: Any, reason: str):
        self.option, self.value, self.reason = option, value, reason
        super().__init__(f"{option} {value}: {reason}")


class MemoryLimitError(EvaluationError):
    """A workload's inputs and outputs alone exceed the evaluation's memory limit (checked before any is made)."""


class RootSandboxRefused(EvaluationError):
    """A service or worker would start sandboxes that keep root, and was not told to accept that."""
