"""What the loader accepts from an upstream file but does not use, said with file, line and field.

SOL-ExecBench reads a workload's axes and input descriptors by the names its definition declares and
ignores the rest; its schemas ignore fields they do not know (a tolerance spelled
``required_match_ratio`` leaves ``required_matched_ratio`` at 0.99). solbench reads such files the same
way, so every file upstream accepts loads here, and says what it left unused instead of dropping it
silently. Notes on the same file, field and reason are grouped, their lines listed once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from solbench.spec.workload import Tolerance

UNKNOWN_AXIS = "unknown-axis"
"""A workload sets an axis its definition does not declare: ignored (upstream ignores it)."""
UNKNOWN_INPUT = "unknown-input"
"""A workload describes an input its definition does not have: ignored (upstream ignores it)."""
IGNORED_FIELD = "ignored-field"
"""A field no schema reads (upstream's ignores it too): ignored, the default applies."""

KEPT_UPSTREAM_FIELDS = {"hf_id"}
"""Fields of SOL-ExecBench's definition that solbench keeps (model_extra) without reading: no warning."""

MISSPELLED = {
    "required_match_ratio": "required_matched_ratio",
    "match_ratio": "required_matched_ratio",
    "atol": "max_atol",
    "rtol": "max_rtol",
}
"""Spellings of tolerance fields that upstream's schema does not read, and the field it does read."""


@dataclass(frozen=True)
class LoadNote:
    """One thing a file carries that the loader (like upstream) leaves unused."""

    kind: str
    path: Path
    field: str
    reason: str
    lines: tuple[int, ...] = ()

    def __str__(self) -> str:
        where = f"{self.path}:{line_ranges(self.lines)}" if self.lines else str(self.path)
        return f"{where}: {self.field}: {self.reason}"


def workload_notes(definition, workload, path: Path, line: int) -> list[LoadNote]:
    """The notes on one workload line: axes and inputs its definition does not declare, unknown fields."""
    notes = []
    for name in workload.axes:
        if name not in definition.axes:
            notes.append(
                LoadNote(
                    UNKNOWN_AXIS,
                    path,
                    f"axes.{name}",
                    f"not an axis of {definition.name} (known: "
                    f"{', '.join(definition.axes)}); ignored, as upstream does",
                    (line,),
                )
            )
    for name in workload.inputs:
        if name not in definition.inputs:
            notes.append(
                LoadNote(
                    UNKNOWN_INPUT,
                    path,
                    f"inputs.{name}",
                    f"not an input of {definition.name} "
                    f"(inputs: {', '.join(definition.inputs)}); ignored, as upstream does",
                    (line,),
                )
            )
    for field, value in extra_fields(workload):
        notes.append(LoadNote(IGNORED_FIELD, path, field, _ignored_reason(field, value), (line,)))
    return notes


def without_unknown_names(definition, workload):
    """The workload as upstream reads it: only the axes and inputs its definition declares."""
    axes = {k: v for k, v in workload.axes.items() if k in definition.axes}
    inputs = {k: v for k, v in workload.inputs.items() if k in definition.inputs}
    if len(axes) == len(workload.axes) and len(inputs) == len(workload.inputs):
        return workload
    return workload.model_copy(update={"axes": axes, "inputs": inputs})


def grouped(notes: Iterable[LoadNote]) -> list[LoadNote]:
    """Notes on the same file, field and reason merged into one, their lines together, first seen first."""
    merged: dict[tuple, LoadNote] = {}
    for note in notes:
        key = (note.kind, note.path, note.field, note.reason)
        known = merged.get(key)
        merged[key] = (
            note if known is None else LoadNote(note.kind, note.path, note.field, note.reason, known.lines + note.lines)
        )
    return list(merged.values())


def extra_fields(model: BaseModel, prefix: str = "") -> list[tuple[str, object]]:
    found = [(f"{prefix}{name}", value) for name, value in (model.model_extra or {}).items()]
    for name in type(model).model_fields:
        value = getattr(model, name)
        children = value.items() if isinstance(value, dict) else [(None, value)]
        for key, child in children:
            if isinstance(child, BaseModel):
                found += extra_fields(child, f"{prefix}{name}." + (f"{key}." if key is not None else ""))
    return found


def _ignored_reason(field: str, value: object) -> str:
    last = field.rsplit(".", 1)[-1]
    read = MISSPELLED.get(last)
    if read and field.startswith(("tolerance.", "correctness.")):
        return (
            f"not a field of upstream's tolerance (it reads {read}): upstream ignores it, so {read}'s own value "
            f"(default {_tolerance_default(read)}) applies; solbench follows upstream"
        )
    return "unknown field, ignored"


def _tolerance_default(name: str) -> object:
    """The schema's own default (never a copy of it)."""
    field = Tolerance.model_fields.get(name)
    return field.default if field is not None else "its default"


def line_ranges(lines: tuple[int, ...]) -> str:
    """(1, 2, 3, 7) -> "1-3,7": the lines of a grouped note."""
    parts: list[str] = []
    ordered = sorted(set(lines))
    start = previous = ordered[0]
    for line in ordered[1:] + [None]:
        if line is not None and line == previous + 1:
            previous = line
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if line is not None:
            start = previous = line
    return ",".join(parts)
