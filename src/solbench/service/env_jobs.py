"""Env calls as jobs: the submissions' workers (embedded or Celery) run them with the same guarantees.

A call is claimed and kept alive as a submission is (`job_claims`: one conditional UPDATE, a heartbeat,
a bounded number of tries); its worker resumes the library `Env` from the stored state, runs the call, and writes
the answer, the call's status and the env's new state in ONE transaction, only while it still holds
the claim. So a call run twice (its worker presumed dead) changes the env once. The library's refusal
(budget spent, not a candidate) is an answer, `refused`; anything else is an infrastructure failure,
retried up to `max_attempts` tries, then `failed`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from solbench.optimize import Env, OptimizeError
from solbench.service import job_claims
from solbench.service.agent_envs import Refusal, open_env
from solbench.service.job_claims import Heartbeat, finish_claimed, give_back
from solbench.service.jobs import InfrastructureError, WorkerInfo, next_submission, record_worker
from solbench.service.models import AgentEnv, EnvCall, utcnow

if TYPE_CHECKING:
    from pydantic import BaseModel

    from solbench.service.settings import ServiceSettings


@dataclass(frozen=True)
class QueuedJob:
    """The oldest job a worker may take: a submission or an env call."""

    kind: str
    """``submission`` or ``env_call``."""
    id: int


def oldest_queued_job(session_factory: sessionmaker[Session]) -> QueuedJob | None:
    """The older of the next submission (authors take turns: `jobs.next_submission`) and the oldest queued env call:
    neither kind starves the other."""
    with session_factory() as session:
        submission = next_submission(session)
        call = session.execute(
            select(EnvCall.id, EnvCall.created_at).where(EnvCall.status == "queued").order_by(EnvCall.id).limit(1)
        ).first()
    if call is not None and (submission is None or call.created_at <= submission.created_at):
        return QueuedJob("env_call", call.id)
    return QueuedJob("submission", submission.id) if submission is not None else None


def queued_env_calls(session_factory: sessionmaker[Session]) -> list[int]:
    with session_factory() as session:
        return list(session.scalars(select(EnvCall.id).where(EnvCall.status == "queued")))


def claim_env_call(
    session_factory: sessionmaker[Session], call_id: int, worker: WorkerInfo, stale_after_s: float, max_attempts: int
) -> str | None:
    """Take the call for `worker`: a claim token, or None when it is not queued (done, running elsewhere with a live
    heartbeat, or stale with its `max_attempts` tries used up: the reaper marks it failed)."""
    return job_claims.claim(
        session_factory, EnvCall, call_id, worker.name, stale_after_s=stale_after_s, max_attempts=max_attempts
    )


@dataclass(frozen=True)
class _Answer:
    status: str
    """``done`` or ``refused``."""
    result: dict[str, Any] | None
    refusal: dict[str, Any] | None
    state: dict[str, Any]
    card: dict[str, Any] | None


def execute_env_call(
    session_factory: sessionmaker[Session], call_id: int, worker: WorkerInfo, *, settings: ServiceSettings
) -> None:
    """Claim, run and store one env call; see the module docstring. Returns at once when it is not queued."""
    token = claim_env_call(session_factory, call_id, worker, settings.stale_after_s, settings.max_attempts)
    if token is None:
        return
    beat = Heartbeat(session_factory, EnvCall, call_id, token, settings.heartbeat_s)
    beat.start()
    try:
        answer = _run(session_factory, call_id, worker, settings)
    except Exception as error:
        beat.stop()
        message = f"{type(error).__name__}: {error}"
        give_back(session_factory, EnvCall, call_id, token, settings.max_attempts, message)
        raise InfrastructureError(f"env call {call_id}: {message}") from error
    except BaseException:  # the worker is stopping: the call waits for the next one, no try used
        beat.stop()
        give_back(session_factory, EnvCall, call_id, token, settings.max_attempts, None)
        raise
    beat.stop()
    _store(session_factory, call_id, token, answer)
    record_worker(session_factory, worker, finished=True)


def _run(
    session_factory: sessionmaker[Session], call_id: int, worker: WorkerInfo, settings: ServiceSettings
) -> _Answer:
    config = settings.evaluation.config(worker.device)
    with session_factory() as session:
        call = session.get(EnvCall, call_id)
        assert call is not None, "a claimed call's row exists"
        cache = settings.user_cache_dir(call.user_id)
        cache.mkdir(parents=True, exist_ok=True)
        env = open_env(call.env, config, cache=cache, session=session)
        kind, solution, arguments = call.kind, call.solution, call.arguments or {}
    try:
        with env:
            result = _call(env, kind, solution, arguments)
    except OptimizeError as error:
        return _Answer("refused", None, Refusal.of(error).as_json(), as_json(env.snapshot()), None)
    answer = as_json(result)
    return _Answer("done", answer, None, as_json(env.snapshot()), answer if kind == "reset" else None)


def _call(env: Env, kind: str, solution: dict[str, Any] | None, arguments: dict[str, Any]) -> BaseModel:
    if kind == "reset":
        return env.reset()
    if kind == "finalize":
        return env.finalize()
    assert solution is not None, "step and test calls are queued with their solution"
    if kind == "step":
        return env.step(solution)
    return env.test(solution, seed=arguments.get("seed"), workload=arguments.get("workload"))


def as_json(model: BaseModel) -> dict[str, Any]:
    """A result as strict JSON (an infinite error as the string "Infinity"), as JSON columns and responses take it."""
    return json.loads(model.model_dump_json())


def _store(session_factory: sessionmaker[Session], call_id: int, token: str, answer: _Answer) -> None:
    with session_factory.begin() as session:
        finished = finish_claimed(
            session, EnvCall, call_id, token, status=answer.status, result=answer.result, refusal=answer.refusal
        )
        if not finished:  # the claim was taken over: the other run stores its answer
            return
        env_id = session.scalar(select(EnvCall.env_id).where(EnvCall.id == call_id))
        values: dict[str, Any] = {"state": answer.state, "updated_at": utcnow()}
        if answer.card is not None:
            values["card"] = answer.card
        session.execute(update(AgentEnv).where(AgentEnv.id == env_id).values(**values))
