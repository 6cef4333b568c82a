"""Reading rollouts from where they are kept: an optimize run's journal, an env history file, exported trajectories.

A path is an optimize run folder (it holds journal.jsonl), a journal.jsonl itself, an env history (.json,
`env_history.py`), trajectories `solbench export trajectories` wrote (.jsonl), or a folder holding optimize
runs anywhere below it (`solbench baseline --agent` keeps one per problem). Anything else is refused with
the path and what was expected: a metric computed from a half-read or foreign file would be wrong without
saying so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from solbench.optimize.card import ProblemCard
from solbench.optimize.env_history import load_env_history
from solbench.optimize.errors import InvalidRunSource
from solbench.optimize.journal import JOURNAL_FILE, CandidateRecord, Journal
from solbench.optimize.loop_errors import WorkspaceError
from solbench.optimize.results import FinalResult, StepResult
from solbench.optimize.resume import RunState, run_state
from solbench.optimize.trajectory import Trajectory, TrajectoryStep, read_trajectories
from solbench.spec.problem_set import problem_set
from solbench.spec.solution import Solution

ModelT = TypeVar("ModelT", bound=BaseModel)


def load_trajectories(paths: Iterable[str | Path]) -> list[Trajectory]:
    """One Trajectory per run found at `paths`, in the order given (runs below a folder in path order)."""
    found: list[Trajectory] = []
    for path in paths:
        found.extend(_trajectories_at(Path(path)))
    return found


def _trajectories_at(path: Path) -> list[Trajectory]:
    if path.is_dir():
        if (path / JOURNAL_FILE).is_file():
            return [trajectory_of_journal(path / JOURNAL_FILE)]
        journals = sorted(path.rglob(JOURNAL_FILE))
        if not journals:
            raise InvalidRunSource(path, f"no optimize run here or below (no {JOURNAL_FILE})")
        return [trajectory_of_journal(journal) for journal in journals]
    if not path.exists():
        raise InvalidRunSource(path, "no such file or folder")
    if path.suffix != ".jsonl":
        return [trajectory_of_env_history(path)]
    kind = _jsonl_kind(path)
    return read_trajectories(path) if kind == "trajectories" else [trajectory_of_journal(path)]


def _jsonl_kind(path: Path) -> str:
    """``journal`` or ``trajectories`` (`solbench export trajectories`), told by the first line."""
    try:
        with path.open("rb") as file:
            first = json.loads(file.readline() or b"null")
    except (OSError, ValueError) as error:
        raise InvalidRunSource(path, f"not a solbench optimize journal or exported trajectories ({error})") from None
    if isinstance(first, dict) and first.get("type") == "run":
        return "journal"
    if isinstance(first, dict) and "format_version" in first and "steps" in first:
        return "trajectories"
    raise InvalidRunSource(
        path, "not a solbench optimize journal (its first line is no `run` record) or exported trajectories"
    )


def trajectory_of_journal(path: Path) -> Trajectory:
    """The rollout an optimize run journaled; InvalidRunSource (or JournalError, naming the line) if not one."""
    try:
        state = run_state(Journal(path).read())
    except UnicodeDecodeError:
        raise InvalidRunSource(path, "not a solbench optimize journal (not UTF-8 text)") from None
    except OSError as error:
        raise InvalidRunSource(path, f"cannot read it ({error.strerror or error})") from None
    except WorkspaceError as error:  # two runs in one journal (Journal.read's own errors name the path and line)
        raise InvalidRunSource(path, str(error)) from None
    run = state.run
    if run is None:
        raise InvalidRunSource(path, "not a solbench optimize journal (no `run` record)")
    card = _parsed(path, "card", ProblemCard, state.card.card) if state.card else None
    results = {
        record.candidate_id: _parsed(path, f"candidate {record.candidate_id} result", StepResult, record.result)
        for record in state.evaluated
        if record.result is not None  # always, for an evaluated one: said again for the type checker
    }
    steps = [_journal_step(path, record, results.get(record.candidate_id)) for record in state.candidates.values()]
    final = _journal_final(path, state)
    definition = _definition_file(Path(run.problem))
    problem = card.problem if card else _problem_name(steps, final) or definition.get("name") or Path(run.problem).name
    tags = card.definition.tags if card else definition.get("tags") or []
    return Trajectory(
        source=str(path.parent if path.name == JOURNAL_FILE else path),
        source_kind="optimize_run",
        problem=problem,
        set=problem_set(tags),
        agent=run.agent,
        reward_kind=_reward_kind(card, list(results.values()), final),
        card=card,
        steps=steps,
        final=final,
        final_candidate=state.final.best if state.final and final else None,
    )


def trajectory_of_env_history(path: Path) -> Trajectory:
    history = load_env_history(path)
    steps = [
        TrajectoryStep(
            candidate=str(result.info.candidate_id),
            action=result.solution,
            reward=result.reward,
            feedback=result.feedback,
            info=result.info,
        )
        for result in history.steps
    ]
    final = history.final.model_copy(update={"traces": []}) if history.final else None
    final_id = final.candidate_id if final else None
    return Trajectory(
        source=str(path),
        source_kind="env_history",
        problem=history.card.problem,
        set=problem_set(history.card.definition.tags),
        reward_kind=history.card.reward,
        card=history.card,
        steps=steps,
        final=final,
        final_candidate=None if final_id is None else str(final_id),
    )


def _journal_step(path: Path, record: CandidateRecord, result: StepResult | None) -> TrajectoryStep:
    solution = record.solution if result is None else None  # an evaluated one's is in its result
    action = _parsed(path, f"candidate {record.candidate_id} solution", Solution, solution) if solution else None
    return TrajectoryStep(
        candidate=record.candidate_id,
        round=record.round,
        action=result.solution if result else action,
        reward=result.reward if result else None,
        feedback=result.feedback if result else [],
        info=result.info if result else None,
        error=record.error,
    )


def _journal_final(path: Path, state: RunState) -> FinalResult | None:
    if state.final is None or state.final.result is None:
        return None
    return _parsed(path, "final result", FinalResult, {**state.final.result, "traces": []})


def _parsed(path: Path, what: str, model: type[ModelT], value: dict[str, Any]) -> ModelT:
    try:
        return model.model_validate(value)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"])
        raise InvalidRunSource(path, f"{what}: {field + ': ' if field else ''}{first['msg']}") from None


def _definition_file(problem: Path) -> dict[str, Any]:
    """The run's definition.json where it still is (a journal without a card names the problem by its folder)."""
    try:
        value = json.loads((problem / "definition.json").read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _problem_name(steps: list[TrajectoryStep], final: FinalResult | None) -> str | None:
    if final is not None:
        return final.problem
    return next((step.action.definition for step in steps if step.action is not None), None)


def _reward_kind(card: ProblemCard | None, results: list[StepResult], final: FinalResult | None) -> str | None:
    if card is not None:
        return card.reward
    if results:
        return results[0].reward_kind
    return final.reward_kind if final else None
