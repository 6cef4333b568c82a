"""Env calls as jobs: the submissions' workers (embedded or Celery) run them with the same guarantees.

A call is claimed with one conditional UPDATE (queued -> running, a fresh claim token) and kept alive
by a heartbeat; its worker resumes the library `Env` from the stored state, runs the call, and writes
the answer, the call's status and the env's new state in ONE transaction, only while it still holds
the claim. So a call run twice (its worker presumed dead) changes the env once. The library's refusal
(budget spent, not a candidate) is an answer, `refused`; anything else is an infrastructure failure,
retried up to `max_attempts` tries, then `failed`.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from solbench.optimize import Env, OptimizeError
from solbench.service.agent_envs import Refusal, open_env
from solbench.service.jobs import InfrastructureError, WorkerInfo, record_worker
from solbench.service.models import AgentEnv, EnvCall, Submission, utcnow

if TYPE_CHECKING:
    from pydantic import BaseModel

    from solbench.service.settings import ServiceSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueuedJob:
    """The oldest job a worker may take: a submission or an env call."""

    kind: str
    """``submission`` or ``env_call``."""
    id: int


def oldest_queued_job(session_factory: sessionmaker[Session]) -> QueuedJob | None:
    """The older of the oldest queued submission and env call: neither kind starves the other."""
    with session_factory() as session:
        submission = session.execute(
            select(Submission.id, Submission.created_at)
            .where(Submission.status == "queued", Submission.deleted_at.is_(None))
            .order_by(Submission.id)
            .limit(1)
        ).first()
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
    """Take the call for `worker`: a claim token, or None when it is not queued (done, or running elsewhere with a
    live heartbeat). A stale running call is taken over only while it has tries left: past `max_attempts` the
    reaper marks it failed, so a call that kills its workers is not run without end."""
    token, now = secrets.token_hex(16), utcnow()
    with session_factory.begin() as session:
        claimed = session.execute(
            update(EnvCall)
            .where(
                EnvCall.id == call_id,
                or_(
                    EnvCall.status == "queued",
                    and_(
                        EnvCall.status == "running",
                        EnvCall.heartbeat_at < now - timedelta(seconds=stale_after_s),
                        EnvCall.attempts < max_attempts,
                    ),
                ),
            )
            .values(
                status="running",
                claim_token=token,
                worker=worker.name,
                started_at=now,
                heartbeat_at=now,
                attempts=EnvCall.attempts + 1,
            )
            .execution_options(synchronize_session=False)
        ).rowcount  # pyright: ignore[reportAttributeAccessIssue]
    return token if claimed == 1 else None


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
    beat = _CallHeartbeat(session_factory, call_id, token, settings.heartbeat_s)
    beat.start()
    try:
        answer = _run(session_factory, call_id, worker, settings)
    except Exception as error:
        beat.stop()
        _give_back(session_factory, call_id, token, settings.max_attempts, f"{type(error).__name__}: {error}")
        raise InfrastructureError(f"env call {call_id}: {type(error).__name__}: {error}") from error
    except BaseException:  # the worker is stopping: the call waits for the next one, no try used
        beat.stop()
        _give_back(session_factory, call_id, token, settings.max_attempts, None)
        raise
    beat.stop()
    _store(session_factory, call_id, token, answer)
    record_worker(session_factory, worker, finished=True)


def _run(
    session_factory: sessionmaker[Session], call_id: int, worker: WorkerInfo, settings: ServiceSettings
) -> _Answer:
    config = settings.evaluation.config(worker.device)
    settings.cache_dir.mkdir(parents=True, exist_ok=True)
    with session_factory() as session:
        call = session.get(EnvCall, call_id)
        assert call is not None, "a claimed call's row exists"
        env = open_env(call.env, config, cache=settings.cache_dir, session=session)
        kind, solution = call.kind, call.solution
    try:
        with env:
            result = _call(env, kind, solution)
    except OptimizeError as error:
        return _Answer("refused", None, Refusal.of(error).as_json(), as_json(env.snapshot()), None)
    answer = as_json(result)
    return _Answer("done", answer, None, as_json(env.snapshot()), answer if kind == "reset" else None)


def _call(env: Env, kind: str, solution: dict[str, Any] | None) -> BaseModel:
    if kind == "reset":
        return env.reset()
    if kind == "finalize":
        return env.finalize()
    assert solution is not None, "step and test calls are queued with their solution"
    return env.step(solution) if kind == "step" else env.test(solution)


def as_json(model: BaseModel) -> dict[str, Any]:
    """A result as strict JSON (an infinite error as the string "Infinity"), as JSON columns and responses take it."""
    return json.loads(model.model_dump_json())


def _store(session_factory: sessionmaker[Session], call_id: int, token: str, answer: _Answer) -> None:
    with session_factory.begin() as session:
        released = session.execute(
            update(EnvCall)
            .where(EnvCall.id == call_id, EnvCall.claim_token == token, EnvCall.status == "running")
            .values(
                status=answer.status,
                result=answer.result,
                refusal=answer.refusal,
                error=None,
                claim_token=None,
                finished_at=utcnow(),
            )
            .execution_options(synchronize_session=False)
        ).rowcount  # pyright: ignore[reportAttributeAccessIssue]
        if released != 1:  # the claim was taken over: the other run stores its answer
            return
        env_id = session.scalar(select(EnvCall.env_id).where(EnvCall.id == call_id))
        values: dict[str, Any] = {"state": answer.state, "updated_at": utcnow()}
        if answer.card is not None:
            values["card"] = answer.card
        session.execute(update(AgentEnv).where(AgentEnv.id == env_id).values(**values))


def _give_back(
    session_factory: sessionmaker[Session], call_id: int, token: str, max_attempts: int, message: str | None
) -> None:
    """Queued again for another try, or failed once the tries are used up; without a message (the worker was
    stopped) queued again without counting the try."""
    with session_factory.begin() as session:
        call = session.get(EnvCall, call_id)
        if call is None or call.claim_token != token:
            return
        call.claim_token = None
        if message is None:
            call.status, call.attempts = "queued", max(0, call.attempts - 1)
            return
        _retry_or_fail(call, message, max_attempts)


def _retry_or_fail(call: EnvCall, message: str, max_attempts: int) -> None:
    call.claim_token, call.error = None, message[:2000]
    if call.attempts >= max_attempts:  # its caller is told only the call's id: the reason is for the operator
        call.status, call.finished_at = "failed", utcnow()
        log.warning("env call %s failed after %s tries: %s", call.id, call.attempts, call.error)
    else:
        call.status = "queued"


def requeue_stale_env_calls(
    session_factory: sessionmaker[Session], stale_after_s: float, max_attempts: int, *, worker_name: str | None = None
) -> int:
    """Running calls whose heartbeat stopped (or, with `worker_name`, every running call of a worker known dead):
    queued again, or failed after `max_attempts` tries. Returns how many."""
    with session_factory.begin() as session:
        query = select(EnvCall).where(EnvCall.status == "running")
        if worker_name is not None:
            query = query.where(EnvCall.worker == worker_name)
        else:
            query = query.where(EnvCall.heartbeat_at < utcnow() - timedelta(seconds=stale_after_s))
        calls = session.scalars(query).all()
        for call in calls:
            _retry_or_fail(call, f"worker {call.worker} stopped answering", max_attempts)
        return len(calls)


class _CallHeartbeat:
    """Refreshes the call's heartbeat while it runs, so the reaper leaves a live call alone."""

    def __init__(self, session_factory: sessionmaker[Session], call_id: int, token: str, interval_s: float):
        self._args = (session_factory, call_id, token)
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"env-call-heartbeat-{call_id}")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        session_factory, call_id, token = self._args
        while not self._stop.wait(self._interval):
            try:
                with session_factory.begin() as session:
                    session.execute(
                        update(EnvCall)
                        .where(EnvCall.id == call_id, EnvCall.claim_token == token)
                        .values(heartbeat_at=utcnow())
                        .execution_options(synchronize_session=False)
                    )
            except Exception:
                continue
