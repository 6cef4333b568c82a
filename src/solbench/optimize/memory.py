"""The strategy memory: verified records of what worked (problem family, technique, measured gain).

Only the loop writes it, and only from candidates it evaluated itself that were correct and not
flagged as cheats: an agent can state a technique (solution.json's description, or a strategy.json
beside it) but not a gain. The memory is a JSONL file (DIR/memory.jsonl by default, or one file shared
by many runs with `--memory`), copied into each round folder as memory.jsonl, the records of the
problem's own family first.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from solbench.optimize.journal import now


class StrategyRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    family: str
    """The problem family: the definition's op_type (e.g. ``rmsnorm``, ``gemm``)."""
    problem: str
    """The definition name."""
    technique: str
    """What the agent said it did (its strategy.json, else the first line of the solution's description)."""
    gain: float
    """Measured speedup over the reference: geometric mean over public workloads of T_ref / T_k (>1 is faster)."""
    reward: float | None = None
    """The env's reward for the candidate."""
    hardware: str = ""
    candidate: str
    """``<round>-<k>`` in the run that measured it."""
    run: str = ""
    """The run folder."""
    verified: bool = True
    """Always true: written by the loop from its own measurement, never by an agent."""
    at: str = Field(default_factory=now)


class StrategyMemory:
    def __init__(self, path: Path):
        self.path = Path(path)

    def read(self) -> list[StrategyRecord]:
        if not self.path.is_file():
            return []
        records = []
        for line in self.path.read_text().splitlines():
            try:
                records.append(StrategyRecord.model_validate_json(line))
            except ValueError:
                continue  # a partial last line after a kill, or a line another version wrote
        return records

    def add(self, record: StrategyRecord) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, (record.model_dump_json() + "\n").encode())
        finally:
            os.close(descriptor)

    def lines_for(self, family: str) -> list[str]:
        """Every record as a JSON line, this family's first, best gain first within each group."""
        records = sorted(self.read(), key=lambda r: (r.family != family, -r.gain))
        return [r.model_dump_json() for r in records]


def stated_technique(technique: str | None, description: str | None) -> str | None:
    """The agent's own words for what a candidate does: its strategy file, else its description's first line."""
    if technique:
        return technique
    if description and description.strip():
        return description.strip().splitlines()[0][:200]
    return None
