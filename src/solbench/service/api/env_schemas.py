"""Request and response bodies of /api/v1/envs: the agent environment over HTTP (answers are the library's models)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from solbench.evaluation.config import MAX_INPUT_SEED
from solbench.optimize import BudgetLeft, Candidate, ProblemCard
from solbench.service.times import UtcDateTime


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class EnvRequest(_Request):
    """`solbench.make`'s arguments a user chooses; the server sets the rest (evaluation settings, cache)."""

    problem: str = Field(min_length=1, max_length=200)
    """The problem's name (GET /api/v1/problems)."""
    hardware: str | None = Field(default=None, max_length=100)
    """The hardware T_SOL is computed for: the server's workers' (GET /api/v1/status); None: that one."""
    reward: str = Field(default="sol", max_length=32)
    """sol, speedup, log_speedup or gated_sol."""
    budget_evals: int | None = Field(default=None, ge=0)
    """Evaluations (steps that measured) allowed; None: unlimited."""
    budget_tests: int | None = Field(default=None, ge=0)
    budget_seconds: float | None = Field(default=None, ge=0)
    """Seconds of measuring allowed; None: unlimited."""


class CandidateRequest(_Request):
    solution: dict[str, Any]
    """A solution file's JSON (docs/formats.md) for the env's problem."""


class TestRequest(CandidateRequest):
    seed: int | None = Field(default=None, ge=0, lt=MAX_INPUT_SEED)
    """Make the inputs from this seed (a failure's `input_seed`) to replay them; None: a fresh secret seed."""
    workload: str | None = Field(default=None, min_length=1, max_length=200)
    """Test this public workload (its uuid) instead of the smallest ones."""


class ResetRequest(_Request):
    seed: int | None = None
    """Recorded on the card (the evaluator's input seeds stay secret); None keeps the last one."""


class CallView(BaseModel):
    """A call still queued or running (HTTP 202): ask `url` (it waits up to `?wait=` seconds) for its answer."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    id: int
    env: int
    kind: str
    """reset (the env's first call: its card), step, test or finalize."""
    status: str
    attempts: int
    url: str


class EnvCreated(BaseModel):
    """What POST /envs answers once the env's card is made (201)."""

    id: int
    card: ProblemCard


class EnvView(BaseModel):
    """GET /envs/{id}: the env's settings and what the library says of its state."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    id: int
    problem: str
    problem_version: str
    hardware: str
    reward: str
    budget: dict[str, float | None]
    """The limits it was made with (evals, tests, seconds; null: unlimited)."""
    budget_left: BudgetLeft
    done: bool
    """No evaluation may run any more (a step would be refused): the budget is spent or the env finalized."""
    finalized: bool
    """Finalized: POST /finalize answers its stored result, and no step or test is taken."""
    card: ProblemCard | None
    """None until its first call has made it."""
    history: list[Candidate]
    best: Candidate | None
    active_call: CallView | None
    """The call queued or running now, if any: an env runs one call at a time."""
    created_at: UtcDateTime
