"""The suite's problems as reach matches them: name, set, op_type and the constant sizes of their axes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from solbench.json_files import read_json_file
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
        path = folder / "definition.json"
        definition = read_json_file(path, "definition", ReachError)
        if not isinstance(definition, dict):
            raise ReachError(f"{path}: expected a JSON object (a problem definition)")
        tags = definition.get("tags") or []
        if not isinstance(tags, list):
            raise ReachError(f"{path}: tags: expected a list of strings")
        sizes = frozenset(
            int(axis["value"])
            for axis in (definition.get("axes") or {}).values()
            if isinstance(axis, dict) and axis.get("type") == "const" and isinstance(axis.get("value"), int)
        )
        problems.append(
            SuiteProblem(
                name=definition.get("name", folder.name),
                set=problem_set(tags, folder, root),
                op_type=definition.get("op_type") or "",
                models=tuple(t[len("model:") :] for t in tags if isinstance(t, str) and t.startswith("model:")),
                sizes=sizes,
            )
        )
    return problems
