"""The database schema (SQLAlchemy 2). The Alembic migrations under migrations/ must build exactly this:
tests/service/test_migrations.py compares the two with Alembic's autogenerate.

Times are naive UTC (`utcnow`), the same on SQLite and PostgreSQL. JSON columns hold the solution,
problem definitions and traces as the spec models dump them.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    banned: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    tokens: Mapped[list[ApiToken]] = relationship(back_populates="user")


class ApiToken(Base):
    """A bearer token, stored as the sha256 of the token: the token itself is shown once, at creation."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)

    user: Mapped[User] = relationship(back_populates="tokens")


class ServedProblem(Base):
    """A problem by name; what it asks is in its versions (the newest imported one is current)."""

    __tablename__ = "problems"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    set_name: Mapped[str] = mapped_column(String(100), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    versions: Mapped[list[ProblemVersion]] = relationship(back_populates="problem", order_by="ProblemVersion.id")


class ProblemSet(Base):
    """What the pages say about a set (`ServedProblem.set_name`) and when it was frozen: from then on the code of every
    submission to it is public. A set without a row is open and has no title."""

    __tablename__ = "problem_sets"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    title: Mapped[str] = mapped_column(String(200), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    frozen_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class ProblemVersion(Base):
    """One version of a problem: its definition and workloads, identified by their hash; a change is a new
    version. `held_out` are the hidden workloads ranked submissions also run on; the API never serves them."""

    __tablename__ = "problem_versions"
    __table_args__ = (UniqueConstraint("problem_id", "version_hash"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    problem_id: Mapped[int] = mapped_column(ForeignKey("problems.id"), index=True)
    version_hash: Mapped[str] = mapped_column(String(64))
    definition: Mapped[dict[str, Any]] = mapped_column(JSON)
    workloads: Mapped[list[Any]] = mapped_column(JSON)
    held_out: Mapped[list[Any]] = mapped_column(JSON)
    source_dir: Mapped[str] = mapped_column(Text)
    """The folder it was imported from: data files (safetensors) are read from there."""
    is_current: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    problem: Mapped[ServedProblem] = relationship(back_populates="versions")


class SolAnalysis(Base):
    """T_SOL per workload (public and held-out) of one problem version on one hardware, by one analyzer."""

    __tablename__ = "sol_analyses"
    __table_args__ = (UniqueConstraint("problem_version_id", "hardware", "analyzer_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    problem_version_id: Mapped[int] = mapped_column(ForeignKey("problem_versions.id"))
    hardware: Mapped[str] = mapped_column(String(100))
    analyzer_version: Mapped[str] = mapped_column(String(64))
    t_sol_ms: Mapped[dict[str, Any]] = mapped_column(JSON)
    """workload uuid -> T_SOL in ms."""
    costs: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """workload uuid -> {flops, bytes, compute_ms, memory_ms}: the roofline the problem page draws."""
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class ImportedBaseline(Base):
    """T_b of one workload on one hardware, imported from a baselines file (`solbench baseline`)."""

    __tablename__ = "baselines"
    __table_args__ = (UniqueConstraint("definition", "workload", "hardware"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    definition: Mapped[str] = mapped_column(String(200))
    workload: Mapped[str] = mapped_column(String(200))
    hardware: Mapped[str] = mapped_column(String(100))
    latency_ms: Mapped[float] = mapped_column(Float)
    source: Mapped[str] = mapped_column(String(200))
    imported_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Submission(Base):
    """A solution for a problem version, its mode and where it is in the queue.

    status: queued -> running -> done | failed; `deleted_at` hides it (it still counts for rate limits).
    A worker claims a job by setting `claim_token` (see jobs.py); its heartbeat keeps the claim alive.
    """

    __tablename__ = "submissions"
    __table_args__ = (
        UniqueConstraint("user_id", "idempotency_key"),
        Index("ix_submissions_status_id", "status", "id"),
        Index("ix_submissions_user_created", "user_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    problem_version_id: Mapped[int] = mapped_column(ForeignKey("problem_versions.id"), index=True)
    mode: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default="queued")
    solution: Mapped[dict[str, Any]] = mapped_column(JSON)
    code_hash: Mapped[str] = mapped_column(String(64), index=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    deleted_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    claim_token: Mapped[str | None] = mapped_column(String(64), nullable=True)
    worker: Mapped[str | None] = mapped_column(String(200), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    rescore_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    """Set when `solbench admin rescore` queued it again; the new result replaces the old one."""

    user: Mapped[User] = relationship()
    problem_version: Mapped[ProblemVersion] = relationship()
    result: Mapped[Result | None] = relationship(back_populates="submission", uselist=False)


class Result(Base):
    """The one result of a submission (unique): score, verdict, where and by what it was measured, traces."""

    __tablename__ = "results"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), unique=True)
    problem_version_id: Mapped[int] = mapped_column(ForeignKey("problem_versions.id"))
    """The version it was measured on (a rescore may move it to a newer one)."""
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    """S of the problem: public workloads, and for ranked submissions the held-out ones too."""
    public_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    held_out_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    held_out_passed: Mapped[bool] = mapped_column(Boolean, default=False)
    """The secret held-out run passed: every held-out workload of the version it was measured on ran and PASSED
    (true where the version holds none out). A ranked score counts only then (scoring.held_out_run_passed)."""
    verdict: Mapped[str] = mapped_column(String(32))
    harness_version: Mapped[str] = mapped_column(String(64))
    hardware: Mapped[str] = mapped_column(String(100))
    device: Mapped[str] = mapped_column(String(200))
    worker: Mapped[str] = mapped_column(String(200))
    environment: Mapped[dict[str, Any]] = mapped_column(JSON)
    clock: Mapped[dict[str, Any]] = mapped_column(JSON)
    traces: Mapped[list[Any]] = mapped_column(JSON)
    """Public workloads' traces, raw timing samples included."""
    held_out_traces: Mapped[list[Any]] = mapped_column(JSON)
    """Never served: they would reveal the held-out workloads."""
    t_sol_ms: Mapped[dict[str, Any]] = mapped_column(JSON)
    t_b_ms: Mapped[dict[str, Any]] = mapped_column(JSON)
    cache_hit: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    rescored_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)

    submission: Mapped[Submission] = relationship(back_populates="result")


class SubmissionFlag(Base):
    """An admin's word that a submission is hacked (`solbench admin flag`): it leaves every ranking and its author
    is told why. At most one per submission; `solbench admin unflag` deletes it."""

    __tablename__ = "submission_flags"

    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), primary_key=True)
    reason: Mapped[str] = mapped_column(Text)
    flagged_by: Mapped[str] = mapped_column(String(200))
    flagged_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class ScoreChange(Base):
    """A rescore that changed a result: what it was, what it is, and why."""

    __tablename__ = "score_changes"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    old_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    new_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    old_harness: Mapped[str] = mapped_column(String(64))
    new_harness: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(Text)


class Worker(Base):
    """An evaluation worker as last seen: where it runs, on what hardware, what it is doing."""

    __tablename__ = "workers"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    hardware: Mapped[str] = mapped_column(String(100))
    device: Mapped[str] = mapped_column(String(100))
    started_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    current_submission_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    evaluations: Mapped[int] = mapped_column(Integer, default=0)
    heartbeat_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    """How often the worker reports while it runs a job (and while idle where `beats_when_idle`)."""
    beats_when_idle: Mapped[bool] = mapped_column(Boolean, default=False)
    stopped_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    """When the worker was seen to exit (by itself, or by the server that started it)."""
    hardware_figures: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    """The worker's own view of its hardware (HardwareFigures as JSON): the status page's peaks."""


class AgentEnv(Base):
    """An optimisation environment served over HTTP (`POST /envs`): one user's, on one problem version.

    Its settings are the `solbench.make` arguments the service lets a user choose; `state` is the library's
    `EnvState` after the last call (None until the first call, the card's, is done). Every decision is the
    library's: a worker resumes an `Env` from these columns, runs the call, and writes the new state back.
    """

    __tablename__ = "agent_envs"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    problem_version_id: Mapped[int] = mapped_column(ForeignKey("problem_versions.id"))
    hardware: Mapped[str] = mapped_column(String(100))
    reward: Mapped[str] = mapped_column(String(32))
    budget: Mapped[dict[str, Any]] = mapped_column(JSON)
    """{"evals": int | None, "tests": int | None, "seconds": float | None}: solbench.Budget's fields."""
    state: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    card: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """The ProblemCard the first call made (T_SOL and T_b are worked out once)."""
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    user: Mapped[User] = relationship()
    problem_version: Mapped[ProblemVersion] = relationship()


class EnvCall(Base):
    """One call on an AgentEnv (reset, step, test, finalize): a job the submissions' workers run.

    status: queued -> running -> done | refused (the library refused it: budget, candidate) | failed (its tries
    used up by infrastructure errors). Claimed and kept alive as a submission is (`claim_token`, heartbeat).
    """

    __tablename__ = "env_calls"
    __table_args__ = (
        Index("ix_env_calls_status_id", "status", "id"),
        Index("ix_env_calls_user_created", "user_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    env_id: Mapped[int] = mapped_column(ForeignKey("agent_envs.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    """The env's owner, here too so that rate limits count calls without a join."""
    kind: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default="queued")
    solution: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    arguments: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """A test's `seed` and `workload` (`Env.test`'s keyword arguments, to replay a failure's inputs); None for the
    other calls."""
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """The library's answer as JSON: a ProblemCard, StepResult, TestResult or FinalResult."""
    refusal: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """Why the library refused the call: {"error": class name, "detail": message, "arguments": {...}}."""
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    claim_token: Mapped[str | None] = mapped_column(String(64), nullable=True)
    worker: Mapped[str | None] = mapped_column(String(200), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)

    env: Mapped[AgentEnv] = relationship()
