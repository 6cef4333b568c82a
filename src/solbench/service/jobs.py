"""Evaluation jobs: the queue interface, and running one submission from claim to stored result.

Every worker (embedded child process or Celery worker) runs a job through `execute_submission`,
so the guarantees live here and in `job_claims` (the claim lifecycle env calls share), in the database,
whatever the queue:

- a job is claimed with one conditional UPDATE, so two workers never run it together; a running job
  whose heartbeat stopped (its worker died) may be claimed again after `stale_after_s`, while it has
  tries left: one that stops its worker every time ends failed after `max_attempts` tries;
- the result and the status change are written in ONE transaction, conditional on still holding the
  claim, and a submission has at most one result (a unique constraint): a job run twice leaves one;
- a solution's own failure (a trace status) is a result; anything else is an InfrastructureError,
  requeued up to `max_attempts` tries and then marked failed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pydantic import ValidationError
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from solbench.errors import SolbenchError
from solbench.service import job_claims
from solbench.service.job_claims import Heartbeat, finish_claimed, give_back
from solbench.service.models import Result, ScoreChange, Submission, Worker, utcnow
from solbench.service.queries import queue_in_turns
from solbench.service.worker_hardware import HardwareFigures

if TYPE_CHECKING:
    from solbench.service.settings import ServiceSettings
    from solbench.spec import Trace


class InfrastructureError(RuntimeError):
    """The evaluation could not run for a reason outside the solution (a missing device, a dead sandbox host,
    a database error): the job may be retried, a bounded number of times."""


class Cancelled(Exception):
    """The submission was deleted while it ran: its evaluation stops at the next workload."""


class UnreadableSolution(SolbenchError):
    """The stored solution no longer passes the solution format's checks (a rule added since it was accepted):
    no try can run it, so the submission fails at once with the reason, for its author to resubmit."""


class JobQueue(Protocol):
    def submit(self, submission_id: int) -> None: ...

    def submit_env_call(self, call_id: int) -> None:
        """An agent env's call (env_jobs.py), run by the same workers."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class WorkerInfo:
    name: str
    hardware: str
    """Hardware id results are scored on (T_SOL); recorded on every result."""
    device: str
    """``cpu``, ``cuda``, ``cuda:N``: where this worker evaluates."""
    heartbeat_s: float | None = None
    """How often it reports while running a job (`settings.heartbeat_s`)."""
    beats_when_idle: bool = False
    """Whether it also reports while waiting (embedded workers do; Celery workers wait on the broker)."""
    figures: HardwareFigures | None = None
    """Its hardware as it resolves it itself (`local` is its own CPU)."""


def claim(
    session_factory: sessionmaker[Session],
    submission_id: int,
    worker: WorkerInfo,
    stale_after_s: float,
    max_attempts: int,
) -> str | None:
    """Take the submission's job for `worker`: a claim token, or None when it is not queued (done, running elsewhere,
    deleted, or stale with its `max_attempts` tries used up)."""
    return job_claims.claim(
        session_factory, Submission, submission_id, worker.name, stale_after_s=stale_after_s, max_attempts=max_attempts
    )


def next_queued(session_factory: sessionmaker[Session]) -> int | None:
    """The id of the queued submission a worker takes next (a candidate for `claim`; another worker may take it
    first): see `next_submission`."""
    with session_factory() as session:
        row = next_submission(session)
        return row.id if row is not None else None


def next_submission(session: Session):
    """The queued submission a worker takes next, as (id, created_at), or None: the first in
    `queries.queue_in_turns`'s order."""
    order = queue_in_turns()
    return session.execute(
        select(order.c.id, order.c.created_at)
        .where(order.c.status == "queued")
        .order_by(order.c.turn, order.c.id)
        .limit(1)
    ).first()


def execute_submission(
    session_factory: sessionmaker[Session],
    submission_id: int,
    worker: WorkerInfo,
    *,
    settings: ServiceSettings | None = None,
) -> None:
    """Claim, evaluate and store one submission; see the module docstring for what is guaranteed.

    `settings` (evaluation knobs, the result cache, retry limits) default to those handed down in the
    environment (`ServiceSettings.from_env`). Returns without doing anything when the job is not queued.
    """
    from solbench.service.settings import ServiceSettings

    settings = settings or ServiceSettings.from_env()
    token = claim(session_factory, submission_id, worker, settings.stale_after_s, settings.max_attempts)
    if token is None:
        return
    record_worker(session_factory, worker, current=submission_id)
    watch = _DeletionWatch(worker.name, submission_id)
    beat = Heartbeat(session_factory, Submission, submission_id, token, settings.heartbeat_s, on_beat=watch)
    beat.start()
    try:
        outcome = _evaluate(session_factory, submission_id, worker, settings, watch.raise_if_cancelled)
    except Cancelled:  # deleted while it ran: nothing to store, nothing to retry
        beat.stop()
        _cancel(session_factory, submission_id, token)
        record_worker(session_factory, worker, current=None)
        return
    except UnreadableSolution as error:  # the author's to fix, not the service's: no retries
        beat.stop()
        with session_factory.begin() as session:
            finish_claimed(session, Submission, submission_id, token, status="failed", error=str(error))
        record_worker(session_factory, worker, current=None)
        return
    except Exception as error:
        beat.stop()
        message = f"{type(error).__name__}: {error}"
        give_back(session_factory, Submission, submission_id, token, settings.max_attempts, message)
        record_worker(session_factory, worker, current=None)
        raise InfrastructureError(f"submission {submission_id}: {message}") from error
    except BaseException:  # the worker is stopping (Ctrl-C, SIGTERM): the job waits for the next one, no try used
        beat.stop()
        give_back(session_factory, Submission, submission_id, token, settings.max_attempts, None)
        raise
    beat.stop()
    _store(session_factory, submission_id, token, worker, outcome)
    record_worker(session_factory, worker, current=None, finished=True)


@dataclass
class _Outcome:
    version_id: int
    traces: list[Trace]
    held_out: list[Trace]
    held_out_workloads: tuple[str, ...]
    """The uuids of the version's held-out workloads: the run passes only when each of them PASSED."""
    t_sol_ms: dict[str, float]
    t_b_ms: dict[str, float]
    scored: bool


def _evaluate(
    session_factory: sessionmaker[Session],
    submission_id: int,
    worker: WorkerInfo,
    settings: ServiceSettings,
    check_cancelled: Callable[[], None] = lambda: None,
) -> _Outcome:
    from solbench.api import evaluate
    from solbench.service.catalog import baselines_for, current_version, spec_problem, t_sol_for
    from solbench.spec import Solution

    with session_factory() as session:
        submission = session.get(Submission, submission_id)
        assert submission is not None, "a claimed submission's row exists (deletion is soft)"
        # A rescore measures on the problem's current version; a first run on the version submitted to.
        version = submission.problem_version
        if submission.rescore_reason:
            version = current_version(session, version.problem.name) or version
        mode = submission.mode
        try:
            solution = Solution.model_validate(submission.solution)
        except ValidationError as error:
            first = error.errors()[0]
            reason = f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
            raise UnreadableSolution(
                f"the stored solution no longer passes the solution format's checks ({reason}); submit it again "
                "with that fixed"
            ) from None
        problem, hidden = spec_problem(version), spec_problem(version, held_out=True)
        t_b = baselines_for(session, problem.name, worker.hardware)
        version_id = version.id
        cache = settings.user_cache_dir(submission.user_id)
    scored = mode != "test"
    config = (settings.evaluation.config if scored else settings.evaluation.test_config)(worker.device)
    cache.mkdir(parents=True, exist_ok=True)

    def progress(done: int, total: int, what: str) -> None:  # between workloads: stop if the submission was deleted
        check_cancelled()

    traces = evaluate(problem, solution, config=config, cache=cache, progress=progress)
    held_out = (
        evaluate(hidden, solution, config=config, progress=progress) if mode == "ranked" and hidden.workloads else []
    )
    t_sol = t_sol_for(session_factory, version_id, worker.hardware) if scored else {}
    held_out_workloads = tuple(w.uuid for w in hidden.workloads)
    return _Outcome(version_id, traces, held_out, held_out_workloads, t_sol, t_b, scored)


def _store(
    session_factory: sessionmaker[Session], submission_id: int, token: str, worker: WorkerInfo, outcome: _Outcome
) -> None:
    from solbench.evaluation.result_cache import harness_version
    from solbench.service.scoring import score_result

    scores = score_result(
        outcome.traces,
        outcome.held_out,
        outcome.t_sol_ms,
        outcome.t_b_ms,
        worker.hardware,
        held_out_workloads=outcome.held_out_workloads,
        scored=outcome.scored,
    )
    first = (outcome.traces or outcome.held_out or [None])[0]
    evaluation = first.evaluation if first is not None else None
    details = evaluation.solbench if evaluation is not None else None
    values = dict(
        problem_version_id=outcome.version_id,
        score=scores.score,
        public_score=scores.public_score,
        held_out_score=scores.held_out_score,
        held_out_passed=scores.held_out_passed,
        verdict=scores.verdict,
        harness_version=harness_version(),
        hardware=worker.hardware,
        device=details.device_name if details else worker.device,
        worker=worker.name,
        environment=evaluation.environment.model_dump(mode="json") if evaluation else {},
        clock=dict(details.clock) if details else {},
        traces=[_as_json(t) for t in outcome.traces],
        held_out_traces=[_as_json(t) for t in outcome.held_out],
        t_sol_ms=outcome.t_sol_ms,
        t_b_ms=scores.t_b_ms,
        cache_hit=bool(details and details.cache and details.cache.hit),
    )
    with session_factory.begin() as session:
        if not finish_claimed(session, Submission, submission_id, token, status="done", rescore_reason=None):
            # the claim was lost (taken over, or the submission deleted): store nothing
            session.execute(
                update(Submission)
                .where(
                    Submission.id == submission_id, Submission.claim_token == token, Submission.deleted_at.is_not(None)
                )
                .values(status="cancelled", claim_token=None, finished_at=utcnow())
                .execution_options(synchronize_session=False)
            )
            return
        existing = session.scalar(select(Result).where(Result.submission_id == submission_id))
        if existing is None:
            session.add(Result(submission_id=submission_id, **values))
            return
        if existing.score != values["score"] or existing.harness_version != values["harness_version"]:
            session.add(
                ScoreChange(
                    submission_id=submission_id,
                    old_score=existing.score,
                    new_score=values["score"],
                    old_harness=existing.harness_version,
                    new_harness=values["harness_version"],
                    reason="re-evaluated",
                )
            )
        for name, value in values.items():
            setattr(existing, name, value)
        existing.rescored_at = utcnow()


def _as_json(trace: Trace) -> dict:
    """A trace as strict JSON: an infinite or NaN error is the string "Infinity"/"NaN" (the spec's own JSON form),
    which PostgreSQL's JSON type and the API's JSON responses accept, and Trace.model_validate reads back."""
    return json.loads(trace.model_dump_json())


def _cancel(session_factory: sessionmaker[Session], submission_id: int, token: str) -> None:
    with session_factory.begin() as session:
        submission = session.get(Submission, submission_id)
        if submission is not None and submission.claim_token == token:
            submission.claim_token, submission.status, submission.finished_at = None, "cancelled", utcnow()


def record_worker(
    session_factory: sessionmaker[Session], worker: WorkerInfo, *, current: int | None = None, finished: bool = False
) -> None:
    """The worker's row for the status page: its hardware, when it was last seen, what it is running."""
    with session_factory.begin() as session:
        row = session.get(Worker, worker.name)
        if row is None:
            row = Worker(name=worker.name, hardware=worker.hardware, device=worker.device, evaluations=0)
            session.add(row)
        row.hardware, row.device, row.last_seen, row.current_submission_id = (
            worker.hardware,
            worker.device,
            utcnow(),
            current,
        )
        row.heartbeat_s, row.beats_when_idle, row.stopped_at = worker.heartbeat_s, worker.beats_when_idle, None
        if worker.figures is not None:
            row.hardware_figures = worker.figures.model_dump()
        if finished:
            row.evaluations = (row.evaluations or 0) + 1


def record_worker_stopped(session_factory: sessionmaker[Session], worker_name: str) -> None:
    """The worker exited (or its parent saw it die): the status page shows it gone at once."""
    with session_factory.begin() as session:
        session.execute(
            update(Worker).where(Worker.name == worker_name).values(stopped_at=utcnow(), current_submission_id=None)
        )


class _DeletionWatch:
    """Run in each heartbeat of a submission's job: keeps its worker's row seen, and notices when the submission was
    deleted meanwhile, so its evaluation stops at the next workload (`raise_if_cancelled`)."""

    def __init__(self, worker_name: str, submission_id: int):
        self._worker_name, self._submission_id = worker_name, submission_id
        self._deleted = threading.Event()

    def __call__(self, session: Session) -> None:
        session.execute(update(Worker).where(Worker.name == self._worker_name).values(last_seen=utcnow()))
        if session.scalar(select(Submission.deleted_at).where(Submission.id == self._submission_id)):
            self._deleted.set()

    def raise_if_cancelled(self) -> None:
        if self._deleted.is_set():
            raise Cancelled()
