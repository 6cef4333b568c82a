"""Errors of the evaluation layer that a user can fix.

What a solution does is never an exception here: it becomes a trace status (see evaluator.py).
"""

from __future__ import annotations

from typing import Any

from solbench.errors import SolbenchError


class HarnessOptionError(SolbenchError):
    """An evaluation option (EvaluationConfig field) has a value the harness cannot run with.

    Raised before any sandbox starts. `option` is the field's name (``timer``, ``timing.budget_s``),
    `value` the value given and `reason` what is wrong with it, so a front end can name its own flag.
    """

    def __init__(self, option: str, value: Any, reason: str):
        self.option, self.value, self.reason = option, value, reason
        super().__init__(f"{option} {value}: {reason}")
