"""What a suite run will evaluate: one job per problem and solution, chosen by set, name and limit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from solbench.spec.problem import DEFINITION_FILE, find_problem_folders
from solbench.spec.problem_set import problem_set
from solbench.spec.validation import read_json

DEFAULT_SUITE = Path("problems")
"""The suite a run plans from when none is named: ./problems."""
REFERENCE = "reference"
"""The solution name that means: the problem's own reference, packaged as a solution."""
COMPILED_REFERENCE = "reference-compiled"
"""The reference under torch.compile (a baseline candidate)."""


@dataclass(frozen=True)
class Job:
    problem_dir: Path
    name: str
    """The definition name."""
    set: str
    solution: str
    """REFERENCE, COMPILED_REFERENCE, or the name of a solution file shipped with the problem."""
    solution_path: Path | None = None

    @property
    def key(self) -> str:
        return f"{self.set}/{self.name}/{self.solution}"


def solution_file(problem_dir: Path, solution_name: str) -> Path | None:
    """A problem's named solution: ``solutions/NAME.json``, ``solution_NAME.json`` or ``NAME.json``."""
    for candidate in (
        problem_dir / "solutions" / f"{solution_name}.json",
        problem_dir / f"solution_{solution_name}.json",
        problem_dir / f"{solution_name}.json",
    ):
        if candidate.is_file():
            return candidate
    return None


def _set_and_name(folder: Path, suite_root: Path) -> tuple[str, str]:
    definition = read_json(folder / DEFINITION_FILE)
    name = str(definition.get("name") or folder.name)
    return problem_set(definition.get("tags") or [], folder, suite_root), name


def plan_jobs(
    suite_root: Path,
    *,
    solutions: list[str],
    categories: list[str] | None = None,
    names: list[str] | None = None,
    limit: int | None = None,
) -> tuple[list[Job], list[str]]:
    """Jobs in suite order, and notes for problems skipped because they lack a named solution.

    ``categories`` match a problem's set (`problem_set`: its ``set:`` tag, else its first folder under the suite),
    case-insensitively; ``names`` match definition names by substring; ``limit`` caps the problems.
    """
    wanted_sets = {c.lower() for c in categories or []}
    jobs: list[Job] = []
    notes: list[str] = []
    problems = 0
    for folder in find_problem_folders(suite_root):
        set_name, name = _set_and_name(folder, suite_root)
        if wanted_sets and set_name.lower() not in wanted_sets:
            continue
        if names and not any(n in name for n in names):
            continue
        if limit is not None and problems >= limit:
            break
        problems += 1
        for solution in solutions:
            if solution in (REFERENCE, COMPILED_REFERENCE):
                jobs.append(Job(folder, name, set_name, solution))
                continue
            path = solution_file(folder, solution)
            if path is None:
                notes.append(
                    f"{name}: no solution named {solution!r} (looked for solutions/{solution}.json, "
                    f"solution_{solution}.json, {solution}.json)"
                )
            else:
                jobs.append(Job(folder, name, set_name, solution, path))
    return jobs, notes
