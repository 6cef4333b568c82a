"""One rollout as training data: the card an agent started from, its actions with their feedback, and the final
re-measurement. `solbench export trajectories` writes one `Trajectory` per line; `read_trajectories` reads them back.

The same record, whether the rollout was an optimize run (its journal) or an env used directly (its saved
history), so a trainer and `solbench report` read one shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from solbench.optimize.atomic_write import write_text_atomically
from solbench.optimize.card import ProblemCard
from solbench.optimize.errors import InvalidRunSource
from solbench.optimize.feedback import WorkloadFeedback
from solbench.optimize.results import FinalResult, StepInfo
from solbench.spec.solution import Solution

TRAJECTORY_FORMAT_VERSION = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, ser_json_inf_nan="strings")


class TrajectoryStep(_Record):
    """One action (a candidate solution) and what the environment answered."""

    candidate: str
    """``<round>-<k>`` in an optimize run; the env's candidate id (``1``, ``2``, …) in an env history."""
    round: int | None = None
    """The optimize round that wrote it; None in an env history."""
    action: Solution | None = None
    """The candidate as submitted; None when its file could not be read as a solution (`error` says why)."""
    reward: float | None = None
    feedback: list[WorkloadFeedback] = []
    """One entry per public workload (the step result's feedback); empty when not evaluated."""
    info: StepInfo | None = None
    """The step result's info (correct, flagged_cheat, cache_hit, …); None when the candidate was not evaluated."""
    error: str | None = None
    """Why the candidate was not evaluated (not a solution, over --candidates, no budget left)."""

    @property
    def evaluated(self) -> bool:
        return self.info is not None


class Trajectory(_Record):
    """One rollout: one agent (or env session) on one problem."""

    format_version: Literal[1] = TRAJECTORY_FORMAT_VERSION
    """Changes when a field changes meaning or goes away; a reader checks it."""
    source: str
    """The run folder or env-history file the rollout was read from."""
    source_kind: Literal["optimize_run", "env_history"]
    problem: str
    """The definition's name."""
    set: str
    """The problem's set: its ``set:`` tag, else ``all``."""
    agent: str | None = None
    """The optimize run's --agent; None for an env history."""
    reward_kind: str | None = None
    """The reward the steps carry (sol, speedup, log_speedup, gated_sol); None when nothing was evaluated."""
    card: ProblemCard | None = None
    """The problem card at the start; None for a run journaled before runs recorded it."""
    steps: list[TrajectoryStep]
    """Every action, in the order it was taken."""
    final: FinalResult | None = None
    """`env.finalize()`'s re-measurement on every workload, held-out ones included, with its `traces` left out
    (an optimize run keeps them in DIR/best/result.json); None when the rollout was not finalized or no
    candidate was correct."""
    final_candidate: str | None = None
    """The step `final` re-measured (its `candidate`); None when none was."""


def write_trajectories(path: str | Path, trajectories: list[Trajectory]) -> Path:
    """JSONL, one Trajectory a line, written atomically."""
    path = Path(path)
    write_text_atomically(path, "".join(t.model_dump_json() + "\n" for t in trajectories))
    return path


def read_trajectories(path: str | Path) -> list[Trajectory]:
    """Every Trajectory in a file `write_trajectories` wrote; InvalidRunSource naming the file and line if not."""
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidRunSource(path, f"cannot read it ({error})") from None
    trajectories = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            trajectories.append(Trajectory.model_validate_json(line))
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"]) or "the line"
            raise InvalidRunSource(f"{path}:{number}", f"not a trajectory ({where}: {first['msg']})") from None
    return trajectories
