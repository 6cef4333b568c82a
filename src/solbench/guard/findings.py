"""A static finding: which rule, where, how serious, and why it matters."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict


class Severity(str, Enum):
    BLOCK = "block"
    """The solution is not run: every workload becomes REWARD_HACK."""
    WARN = "warn"
    """Recorded in the trace; runtime checks decide."""


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str
    severity: Severity
    file: str
    line: int
    message: str
    """What was found, e.g. "assigns time.perf_counter"."""
    explanation: str
    """Why the rule exists: the exploit it closes."""

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    def one_line(self) -> str:
        return f"{self.location}: {self.rule} ({self.severity.value}): {self.message}"
