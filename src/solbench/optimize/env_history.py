"""An environment's history as a file: what `solbench report` and `solbench export trajectories` read from an env
used directly (`solbench.make`, the gymnasium adapter), as they read an optimize run's journal.

The env keeps its step results in memory only; `save_env_history` writes them, with the card the agent started
from and the `finalize` result when there is one, as one JSON document. `restore` takes the steps back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from solbench.optimize.atomic_write import write_text_atomically
from solbench.optimize.card import ProblemCard
from solbench.optimize.errors import InvalidEnvHistory
from solbench.optimize.results import FinalResult, StepResult

if TYPE_CHECKING:
    from solbench.optimize.env import Env

ENV_HISTORY_KIND = "solbench.env_history"
ENV_HISTORY_VERSION = 1


class EnvHistory(BaseModel):
    """One env's rollout: the card, every step result in order, and the final re-measurement."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, ser_json_inf_nan="strings")

    kind: Literal["solbench.env_history"] = ENV_HISTORY_KIND
    """Tells this file from other JSON."""
    format_version: Literal[1] = ENV_HISTORY_VERSION
    card: ProblemCard
    """The problem card the agent was given."""
    steps: list[StepResult]
    """`env.results`: every stepped candidate, in order (candidate ids 1, 2, …)."""
    final: FinalResult | None = None
    """`env.finalize()`'s result; None when the env was not finalized."""


def env_history(env: Env, card: ProblemCard | None = None, final: FinalResult | None = None) -> EnvHistory:
    """`env`'s history; `card` defaults to the env's card now (its `budget_left` then says what is left now)."""
    return EnvHistory(card=card or env.problem_card, steps=env.results, final=final)


def save_env_history(path: str | Path, history: EnvHistory) -> Path:
    """Write `history` to `path` (atomically: a reader never sees half a file)."""
    path = Path(path)
    write_text_atomically(path, history.model_dump_json() + "\n")
    return path


def load_env_history(path: str | Path) -> EnvHistory:
    """The history in `path`; InvalidEnvHistory (naming the file) when it is not one."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise InvalidEnvHistory(path, error.strerror or type(error).__name__) from None
    try:
        return EnvHistory.model_validate_json(text)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "the document"
        raise InvalidEnvHistory(path, f"{where}: {first['msg']}") from None
