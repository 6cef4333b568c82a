"""Baselines T_b as versioned data, keyed by problem, workload and hardware."""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from solbench.scoring.errors import ScoreError

BASELINE_FORMAT_VERSION = 1


class Baseline(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    definition: str
    workload: str
    """Workload uuid."""
    hardware: str
    latency_ms: float = Field(gt=0)
    source: str = "reference"
    """What was timed: e.g. "reference (eager)", "reference (torch.compile)", a solution name."""
    sol_ms: float | None = Field(default=None, ge=0)
    """A reference T_SOL for this workload and hardware (a published one, e.g. SOL-ExecBench's `sol_ms`):
    shown beside solbench's T_SOL with the ratio, never used in its place."""


class BaselineFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = BASELINE_FORMAT_VERSION
    created: str | None = None
    harness_version: str | None = None
    hardware_description: str | None = None
    """The machine measured, in words (for `local`, the CPU model and core count)."""
    baselines: list[Baseline]


class Baselines:
    """Lookup by (definition, workload, hardware); hardware ids compare case-insensitively."""

    def __init__(self, entries: list[Baseline]):
        self._index = {(b.definition, b.workload, b.hardware.upper()): b for b in entries}

    def get(self, definition: str, workload: str, hardware: str) -> Baseline | None:
        return self._index.get((definition, workload, hardware.upper()))

    def __len__(self) -> int:
        return len(self._index)

    def entries(self) -> list[Baseline]:
        return list(self._index.values())


def load_baselines(path: Path) -> Baselines:
    try:
        data = BaselineFile.model_validate(json.loads(Path(path).read_text()))
    except FileNotFoundError:
        raise ScoreError(f"{path}: file not found") from None
    except ValueError as error:
        message = error.errors(include_url=False)[0] if isinstance(error, ValidationError) else None
        where = ".".join(str(p) for p in message["loc"]) + ": " + message["msg"] if message else str(error)
        raise ScoreError(f"{path}: {where}") from None
    if data.version != BASELINE_FORMAT_VERSION:
        raise ScoreError(f"{path}: version {data.version} is not supported (expected {BASELINE_FORMAT_VERSION})")
    return Baselines(data.baselines)


def as_baselines(value: Baselines | str | PathLike[str] | None) -> Baselines | None:
    """The one coercion of a path-or-Baselines argument: a Baselines or None as given, a path (str or PathLike)
    read with `load_baselines`. Raises ScoreError for a missing or malformed file."""
    if value is None or isinstance(value, Baselines):
        return value
    if isinstance(value, (str, PathLike)):
        return load_baselines(Path(value))
    raise TypeError(f"baselines: expected a Baselines or the path of a baselines file, not {type(value).__name__}")


def save_baselines(
    path: Path, entries: list[Baseline], created: str, harness_version: str, hardware_description: str | None = None
) -> None:
    data = BaselineFile(
        created=created, harness_version=harness_version, hardware_description=hardware_description, baselines=entries
    )
    Path(path).write_text(data.model_dump_json(indent=1) + "\n")
