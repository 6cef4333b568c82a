"""Agent environments in the database: making one, queueing a call on it, and the library `Env` a row stands for.

The service decides nothing about budgets, rewards or the best candidate: `open_env` resumes a
`solbench.optimize.Env` from a row's settings and stored `EnvState`, and the library answers. What the
service adds is ownership, one call at a time per environment (a second one waits its turn as a 409),
one finalize per environment (its answer is stored, and the env takes no step or test after it), and
the queue: every call that evaluates runs on the submissions' workers (env_jobs.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from solbench.evaluation.config import EvaluationConfig
from solbench.optimize import Budget, BudgetLedger, Env, EnvState, OptimizeError
from solbench.scoring import Baseline, Baselines
from solbench.service.catalog import spec_problem
from solbench.service.errors import ServiceError
from solbench.service.models import AgentEnv, EnvCall, ImportedBaseline, ProblemVersion, User, utcnow
from solbench.service.queries import MAX_ROW_ID

CallKind = Literal["reset", "step", "test", "finalize"]
ACTIVE = ("queued", "running")
FINISHED = ("done", "refused", "failed")


class CallInProgress(ServiceError):
    """An environment runs one call at a time: another is queued or running (HTTP 409)."""

    def __init__(self, env_id: int, call_id: int):
        self.env_id, self.call_id = env_id, call_id
        super().__init__(
            f"env {env_id}: call {call_id} is still queued or running; wait for it "
            f"(GET /api/v1/envs/{env_id}/calls/{call_id}) before the next one"
        )


class EnvGone(ServiceError):
    """The env was deleted (pruned: untouched for the retention period) while this request held it (HTTP 404)."""

    def __init__(self, env_id: int):
        self.env_id = env_id
        super().__init__(f"env {env_id} no longer exists: it was untouched for the retention period and pruned")


class EnvFinalized(ServiceError):
    """An environment is finalized once, and then takes no more candidates (HTTP 409)."""

    def __init__(self, env_id: int, call_id: int):
        self.env_id, self.call_id = env_id, call_id
        super().__init__(
            f"env {env_id}: finalized (call {call_id}); it takes no more candidates. POST "
            f"/api/v1/envs/{env_id}/finalize answers its final result again; make a new env to go on"
        )


@dataclass(frozen=True)
class Refusal:
    """The library's refusal of a call (budget spent, not a candidate of this problem), as stored and served."""

    error: str
    """The exception's class name: BudgetExhausted, InvalidCandidate, ..."""
    detail: str
    arguments: dict[str, Any]
    """What the client needs to raise the same exception (its constructor's arguments)."""

    @classmethod
    def of(cls, error: OptimizeError) -> Refusal:
        names = {
            "BudgetExhausted": ("kind", "used"),
            "InvalidCandidate": ("where", "reason"),
            "UnknownWorkload": ("workload", "public"),
        }
        wanted = names.get(type(error).__name__, ())
        return cls(type(error).__name__, str(error), {name: getattr(error, name) for name in wanted})

    def as_json(self) -> dict[str, Any]:
        return {"error": self.error, "detail": self.detail, "arguments": self.arguments}


def open_env(
    row: AgentEnv, config: EvaluationConfig, *, cache: Path | None = None, session: Session | None = None
) -> Env:
    """The library environment `row` stands for, resumed from its stored state; nothing is evaluated.

    With `session`, the service's imported baselines of the env's hardware are its T_b (else the reference is
    timed once, by the first call, and kept in the state). Call inside the session that loaded `row`."""
    problem = spec_problem(row.problem_version)
    baselines = _baselines(session, problem.name, row.hardware) if session is not None else None
    env = Env(
        problem,
        hardware=row.hardware,
        budget=Budget(**row.budget),
        reward=row.reward,
        cache=cache,
        config=config,
        baselines=baselines,
        warm_sandboxes=False,  # each call resumes a fresh Env, possibly on another worker: no spare to reuse
    )
    if row.state is not None:
        env.resume(EnvState.model_validate(row.state))
    return env


def ledger_of(row: AgentEnv) -> BudgetLedger:
    """The env's budget ledger as its last call left it."""
    ledger = BudgetLedger(Budget(**row.budget))
    if row.state is not None:
        ledger.resume(EnvState.model_validate(row.state).spent)
    return ledger


def _baselines(session: Session, definition: str, hardware: str) -> Baselines:
    rows = session.scalars(
        select(ImportedBaseline).where(
            ImportedBaseline.definition == definition, func.upper(ImportedBaseline.hardware) == hardware.upper()
        )
    )
    return Baselines(
        [
            Baseline(
                definition=r.definition,
                workload=r.workload,
                hardware=hardware,
                latency_ms=r.latency_ms,
                source=r.source,
            )
            for r in rows
        ]
    )


def create_env(
    session: Session, user: User, version: ProblemVersion, *, hardware: str, reward: str, budget: Budget
) -> tuple[AgentEnv, EnvCall]:
    """A new environment of `user` and its first call (the card: T_SOL and T_b worked out by a worker)."""
    row = AgentEnv(
        user_id=user.id,
        problem_version_id=version.id,
        hardware=hardware,
        reward=reward,
        budget={"evals": budget.evals, "tests": budget.tests, "seconds": budget.seconds},
    )
    session.add(row)
    session.flush()
    call = EnvCall(env_id=row.id, user_id=user.id, kind="reset", status="queued", attempts=0)
    session.add(call)
    session.flush()
    return row, call


def owned_env(session: Session, env_id: int, user: User) -> AgentEnv | None:
    """The env if `user` made it; None otherwise, so that another user's env and no env look the same (404)."""
    if not 0 < env_id <= MAX_ROW_ID:  # no row can have it: the database would raise instead of missing
        return None
    row = session.get(AgentEnv, env_id)
    return row if row is not None and row.user_id == user.id else None


def _hold_idle_env(session: Session, row: AgentEnv) -> None:
    """Hold the env's row until the caller commits, so two requests at once are counted one after the other, and
    re-read it under the hold (a call that finished meanwhile wrote its state). Raises CallInProgress while a call
    is queued or running: its worker will write the whole state when it finishes. Raises EnvGone when the pruner
    deleted the env meanwhile (its lock on the row made this update wait, then match nothing)."""
    held = session.execute(update(AgentEnv).where(AgentEnv.id == row.id).values(updated_at=utcnow()))
    if held.rowcount == 0:  # pyright: ignore[reportAttributeAccessIssue]  (an UPDATE's result has a rowcount)
        raise EnvGone(row.id)
    session.refresh(row)
    active = session.scalar(select(EnvCall.id).where(EnvCall.env_id == row.id, EnvCall.status.in_(ACTIVE)).limit(1))
    if active is not None:
        raise CallInProgress(row.id, active)


def finalize_call(session: Session, env_id: int) -> EnvCall | None:
    """The env's finalize that answered, if it was finalized."""
    return session.scalar(
        select(EnvCall).where(EnvCall.env_id == env_id, EnvCall.kind == "finalize", EnvCall.status == "done").limit(1)
    )


def queue_call(
    session: Session,
    row: AgentEnv,
    kind: CallKind,
    solution: dict[str, Any] | None = None,
    arguments: dict[str, Any] | None = None,
) -> EnvCall:
    """A new call on `row`, queued in the caller's transaction. Raises CallInProgress while another call is
    active, EnvFinalized for a step or test of a finalized env, and OptimizeError (BudgetExhausted) when the
    library's ledger allows no such call now. A finalize of a finalized env is its first finalize, done: nothing is
    queued and nothing re-measured."""
    _hold_idle_env(session, row)
    finalized = finalize_call(session, row.id)
    if finalized is not None:
        if kind == "finalize":
            return finalized
        raise EnvFinalized(row.id, finalized.id)
    if kind in ("step", "test"):
        ledger_of(row).check("eval" if kind == "step" else "test")
    call = EnvCall(
        env_id=row.id,
        user_id=row.user_id,
        kind=kind,
        status="queued",
        solution=solution,
        arguments=arguments,
        attempts=0,
    )
    session.add(call)
    session.flush()
    return call


def final_as_served(result: dict[str, Any]) -> dict[str, Any]:
    """A stored FinalResult as its env's owner gets it: without the traces (inputs, raw samples, logs) and the
    error text of the held-out workloads, which would show what they were. The stored result keeps them."""
    held_out = set(result.get("held_out") or ())
    feedback = [{**f, "error": None} if f.get("workload") in held_out else f for f in result.get("feedback") or ()]
    return {**result, "feedback": feedback, "traces": []}


def reset_card(session: Session, row: AgentEnv, seed: int | None) -> dict[str, Any] | None:
    """`env.reset(seed)` of a prepared env, answered by the library here: its T_SOL and T_b are in the state, so
    nothing is evaluated. The seed is kept in the state, and the call is recorded as a done one (the rate limits
    count it). Raises CallInProgress while a call is active and EnvGone for a pruned env, as `queue_call`; None
    when the env has no card (its first call failed)."""
    _hold_idle_env(session, row)
    if row.card is None or row.state is None:
        return None
    env = open_env(row, EvaluationConfig(device=row.card["device"]))
    card = env.reset(seed).model_dump(mode="json")
    row.state = env.snapshot().model_dump(mode="json")
    now = utcnow()
    session.add(
        EnvCall(
            env_id=row.id,
            user_id=row.user_id,
            kind="reset",
            status="done",
            result=card,
            attempts=0,
            started_at=now,
            finished_at=now,
        )
    )
    return card
