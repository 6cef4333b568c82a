"""Errors raised while reading problems and solutions; each names the file and field at fault."""

from __future__ import annotations

from pathlib import Path

from solbench.errors import SolbenchError


class SpecError(SolbenchError):
    """A problem or solution file is malformed.

    `path` is the file, `field` a dotted location inside it (``axes.N.expression``),
    `line` the 1-based line for JSONL files.
    """

    def __init__(self, path: Path | str | None, field: str | None, reason: str, *, line: int | None = None):
        self.path = Path(path) if path is not None else None
        self.field = field
        self.reason = reason
        self.line = line
        super().__init__(self._format())

    def _format(self) -> str:
        where = str(self.path) if self.path is not None else "<input>"
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where += f": {self.field}"
        return f"{where}: {self.reason}"


class MissingDataError(SpecError):
    """A workload refers to a data file (safetensors) that is not on disk."""


class ConstraintError(SpecError):
    """A definition constraint does not hold for a workload's axes or inputs."""
