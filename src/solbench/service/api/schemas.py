"""Request and response bodies of /api/v1 (the OpenAPI schema is generated from these)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from solbench.service.hacked import Hacked
from solbench.service.settings import Mode
from solbench.service.times import UtcDateTime


class _Body(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


class SubmissionRequest(_Body):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    problem: str = Field(min_length=1, max_length=200)
    """The problem's name (GET /api/v1/problems)."""
    solution: dict[str, Any]
    """A solution file's JSON (docs/formats.md): its `definition` must be the problem's name."""
    mode: Mode = "private"
    """test: correctness only, never scored; private: scored, visible to you only; ranked: scored on public and
    held-out workloads, public, on the leaderboards."""


class SubmissionAccepted(_Body):
    id: int
    status: str
    queue_position: int
    """1: the next to run; 0: not waiting (running or finished)."""
    problem: str
    problem_version: str
    mode: str
    url: str


class ScoreChangeView(_Body):
    at: UtcDateTime
    old_score: float | None
    new_score: float | None
    old_harness: str
    new_harness: str
    reason: str


class ResultView(_Body):
    score: float | None
    """S of the problem, the one that ranks: the mean over every workload it ran (ranked: public and held-out
    workloads together, each counting once)."""
    public_score: float | None
    """S over the public workloads alone: the mean of the S of `traces`."""
    held_out_score: float | None
    """S over the held-out workloads alone; None where none were run (test and private submissions)."""
    held_out_workloads: int
    """How many hidden workloads were run (their traces are not served)."""
    verdict: str
    harness_version: str
    problem_version: str
    hardware: str
    device: str
    worker: str
    environment: dict[str, Any]
    clock: dict[str, Any]
    cache_hit: bool
    t_sol_ms: dict[str, Any]
    t_b_ms: dict[str, Any]
    traces: list[dict[str, Any]]
    """One trace per public workload, raw timing samples included."""
    created_at: UtcDateTime
    rescored_at: UtcDateTime | None
    history: list[ScoreChangeView]


class SubmissionView(_Body):
    id: int
    user: str
    problem: str
    problem_version: str
    mode: str
    status: str
    queue_position: int
    created_at: UtcDateTime
    started_at: UtcDateTime | None
    finished_at: UtcDateTime | None
    attempts: int
    error: str | None
    code_hash: str | None
    """None for readers who may not see the code: a public hash would confirm a guessed solution."""
    solution: dict[str, Any] | None
    """The solution as submitted; None for readers other than its owner and admins."""
    result: ResultView | None
    hacked: Hacked | None = None
    """Why the submission is hacked and off the boards (a guard, the speed-of-light floor or an admin flagged it);
    None when it is not. Only its owner and admins can read a hacked submission: to others it does not exist."""


class Deleted(_Body):
    id: int
    deleted: bool


class WorkloadInfo(_Body):
    uuid: str
    axes: dict[str, int]
    t_sol_ms: float | None
    """Speed of light on the server's hardware (solbench's analyzer)."""
    t_b_ms: float | None
    """Imported baseline on the server's hardware; None: the reference timed in the same run is used."""


class ProblemDetail(_Body):
    name: str
    set: str
    version: str
    hardware: str
    definition: dict[str, Any]
    workloads: list[dict[str, Any]]
    per_workload: list[WorkloadInfo]
    t_sol_error: str | None = None
    """Why T_SOL could not be derived here, when it could not."""
