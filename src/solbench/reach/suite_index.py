"""The suite's problems as reach matches them: name, set, op_type and the constant sizes of their axes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from solbench.reach.errors import ReachError
from solbench.spec.errors import SpecError
from solbench.spec.problem import find_problem_folders
from solbench.spec.problem_set import problem_set


@dataclass(frozen=True)
class SuiteProblem:
    name: str
    set: str
    op_type: str
    models: tuple[str, ...]
    """The ``model:`` tags (which model the problem was taken from, under each of its names)."""
    sizes: frozenset[int]
    """Values of the definition's constant axes (hidden sizes, widths, embedding dims): its shape class."""


def load_suite(root: Path) -> list[SuiteProblem]:
    """Every problem folder under ``root`` (definition.json only: workloads are not needed to match)."""
    root = Path(root)
    if not root.is_dir():
        raise ReachError(f"problems folder {root} does not exist (give one with --problems)")
    try:
        folders = find_problem_folders(root)
    except SpecError:  # a folder without problems: nothing covers the model, which the report says
        folders = []
    problems = []
    for folder in folders:
        try:
            definition = json.loads((folder / "definition.json").read_text())
        except (OSError, ValueError) as error:
            raise ReachError(f"cannot read {folder / 'definition.json'}: {error}") from None
        tags = definition.get("tags") or []
        sizes = frozenset(int(axis["value"]) for axis in (definition.get("axes") or {}).values()
                          if isinstance(axis, dict) and axis.get("type") == "const"
                          and isinstance(axis.get("value"), int))
        problems.append(SuiteProblem(name=definition.get("name", folder.name),
                                     set=problem_set(tags, folder, root), op_type=definition.get("op_type") or "",
                                     models=tuple(t[len("model:"):] for t in tags
                                                 if isinstance(t, str) and t.startswith("model:")), sizes=sizes))
    return problems
