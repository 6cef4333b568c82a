"""The workspace contract: the run folder DIR, and the fresh round folder each round's agent works in.

    DIR/journal.jsonl          everything that happened (journal.py)
    DIR/memory.jsonl           the strategy memory (memory.py), unless --memory names another file
    DIR/history/<r>-<k>/       every candidate: solution.json, feedback.json
    DIR/best/                  the best so far (solution.json, feedback.json); at the end also result.json
    DIR/rounds/<r>/            round r's folder, the agent's working directory
    DIR/rounds/<r>.log         what the agent printed

A round folder holds only what the agent may see:

    INSTRUCTIONS.md, templates/   how to write a solution, and one valid to start from per language and style
    problem/definition.json, workload.jsonl (public workloads), reference.py, sol.json, hardware.json
    history/<r>-<k>/solution.json + feedback.json, history/best/
    feedback.json              the previous round's candidates and their feedback
    memory.jsonl               verified strategy records
    budget.json                what is left of the budget

and the agent writes `solution.json`, or several as `solutions/<name>.json`. The files of problem/ are
hashed when written and re-hashed before scoring (`changed_problem_files`): scoring never reads them
(the env holds the true problem), an edit is only recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROUNDS_DIR = "rounds"
HISTORY_DIR = "history"
BEST_DIR = "best"
MEMORY_FILE = "memory.jsonl"
PROBLEM_DIR = "problem"
SOLUTION_FILE = "solution.json"
SOLUTIONS_DIR = "solutions"
FEEDBACK_FILE = "feedback.json"
BUDGET_FILE = "budget.json"


@dataclass(frozen=True)
class ProblemFiles:
    """What the agent is told about the problem: public workloads only, no seeds, no evaluator files."""

    definition: dict[str, Any]
    workloads: list[dict[str, Any]]
    """Public workloads, one dict per workload.jsonl line."""
    sol: dict[str, Any]
    """T_SOL (and T_b where known) per public workload."""
    hardware: dict[str, Any]
    guide: dict[str, str] = field(default_factory=dict)
    """Relative path -> text of the solution contract's files (INSTRUCTIONS.md, templates/), see instructions.py."""


@dataclass(frozen=True)
class CandidateFile:
    k: int
    path: Path
    """Relative to the round folder."""
    technique: str | None


def write_json_atomically(path: Path, value: Any) -> None:
    """Write then rename, so a reader (or a kill) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.partial")
    temporary.write_text(json.dumps(value, indent=1, default=str) + "\n")
    os.replace(temporary, path)


class Workspace:
    """Paths and file moves of one run folder; knows nothing about evaluation."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def round_dir(self, round_number: int) -> Path:
        return self.root / ROUNDS_DIR / str(round_number)

    def round_log(self, round_number: int) -> Path:
        return self.root / ROUNDS_DIR / f"{round_number}.log"

    def history_dir(self, candidate_id: str) -> Path:
        return self.root / HISTORY_DIR / candidate_id

    @property
    def best_dir(self) -> Path:
        return self.root / BEST_DIR

    def prepare_round(
        self,
        round_number: int,
        problem: ProblemFiles,
        feedback: list[dict[str, Any]],
        memory_lines: list[str],
        budget_left: dict[str, Any],
    ) -> dict[str, str]:
        """A fresh round folder (an earlier one of the same number is removed); returns problem/ hashes."""
        folder = self.round_dir(round_number)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        hashes = write_problem_files(folder / PROBLEM_DIR, problem)
        for path, text in problem.guide.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text)
        if (self.root / HISTORY_DIR).is_dir():
            shutil.copytree(self.root / HISTORY_DIR, folder / HISTORY_DIR)
        else:
            (folder / HISTORY_DIR).mkdir()
        if self.best_dir.is_dir():
            shutil.copytree(
                self.best_dir, folder / HISTORY_DIR / BEST_DIR, ignore=shutil.ignore_patterns("result.json")
            )  # the final result names held-out workloads
        write_json_atomically(folder / FEEDBACK_FILE, feedback)
        (folder / MEMORY_FILE).write_text("".join(line + "\n" for line in memory_lines))
        write_json_atomically(folder / BUDGET_FILE, budget_left)
        return hashes

    def record_candidate(self, candidate_id: str, solution: dict[str, Any], feedback: dict[str, Any]) -> None:
        folder = self.history_dir(candidate_id)
        write_json_atomically(folder / SOLUTION_FILE, solution)
        write_json_atomically(folder / FEEDBACK_FILE, feedback)

    def record_best(self, candidate_id: str, solution: dict[str, Any], feedback: dict[str, Any]) -> None:
        write_json_atomically(self.best_dir / SOLUTION_FILE, solution)
        write_json_atomically(self.best_dir / FEEDBACK_FILE, {"candidate": candidate_id, **feedback})


def write_problem_files(folder: Path, problem: ProblemFiles) -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomically(folder / "definition.json", problem.definition)
    (folder / "workload.jsonl").write_text("".join(json.dumps(w) + "\n" for w in problem.workloads))
    (folder / "reference.py").write_text(str(problem.definition.get("reference", "")))
    write_json_atomically(folder / "sol.json", problem.sol)
    write_json_atomically(folder / "hardware.json", problem.hardware)
    return hash_files(folder)


def hash_files(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder`, by path relative to it."""
    if not folder.is_dir():
        return {}
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def changed_problem_files(round_folder: Path, hashes: dict[str, str]) -> list[str]:
    """Files under problem/ that were edited, removed or added since `prepare_round` wrote them."""
    now = hash_files(round_folder / PROBLEM_DIR)
    return sorted(name for name in set(now) | set(hashes) if now.get(name) != hashes.get(name))


def candidate_files(round_folder: Path) -> list[CandidateFile]:
    """The candidates an agent left: solution.json first (k=1), then solutions/*.json by name.

    A technique stated next to a candidate (`strategy.json` beside solution.json, `solutions/<name>.strategy.json`
    beside the others, `{"technique": "..."}`) is kept for the strategy memory.
    """
    found: list[tuple[Path, Path]] = []
    if (round_folder / SOLUTION_FILE).is_file():
        found.append((Path(SOLUTION_FILE), Path("strategy.json")))
    solutions = round_folder / SOLUTIONS_DIR
    if solutions.is_dir():
        for path in sorted(solutions.glob("*.json")):
            if path.name.endswith(".strategy.json") or not path.is_file():
                continue
            relative = path.relative_to(round_folder)
            found.append((relative, relative.with_name(f"{path.stem}.strategy.json")))
    return [
        CandidateFile(k, path, _stated_technique(round_folder / strategy))
        for k, (path, strategy) in enumerate(found, 1)
    ]


def _stated_technique(path: Path) -> str | None:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):
        return None
    technique = value.get("technique") if isinstance(value, dict) else value if isinstance(value, str) else None
    return str(technique).strip()[:200] or None if technique else None


def problem_sha256(problem_dir: Path) -> str:
    """One hash over the problem folder's definition and workloads, to refuse resuming on another problem."""
    digest = hashlib.sha256()
    for name, file_hash in sorted(hash_files(problem_dir).items()):
        if name in ("definition.json", "workload.jsonl"):
            digest.update(f"{name}:{file_hash}\n".encode())
    return digest.hexdigest()
