"""Submissions evaluated by Celery workers, possibly on other machines (`solbench serve --broker redis://…`).

The server sends each accepted submission's id, with its settings (evaluation knobs, retry limits,
the database URL when it holds no password), to the queue of its hardware; any `solbench worker`
of that hardware takes it and calls `jobs.execute_submission`, which claims the job in the
database, evaluates it and writes its one result in one transaction. The guarantees live in the
database; the broker only has to deliver each id at least once:

- The message is acknowledged after the job (`runner.celery_app`: acks late, reject on worker
  lost, a visibility timeout): if its worker dies, the message goes to another worker.
- A delivery that finds the job running under another worker's claim (a duplicate, or a worker
  that died less than `stale_after_s` ago) comes back later instead of being dropped, so it runs
  the job once that claim went stale, or sees it done. A job that runs twice leaves one result.
- The server requeues jobs whose heartbeat stopped and sends again any job left queued for long
  (a message lost with a restarted Redis, a server that died between commit and send).
- An `InfrastructureError` (not the solution's fault) is retried with backoff; the database counts
  the tries and marks the job failed after `max_attempts`. A solution's own failure (a crash, a
  wrong answer, a timeout) is a result, stored once, never retried.

An agent env's call (`env_jobs.py`) travels the same way, as ENV_CALL_TASK on the same queue.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from solbench.runner.celery_app import (
    MAX_DELIVERIES,
    RUN_QUEUE_PREFIX,
    SUBMISSION_QUEUE_PREFIX,
    BrokerSettings,
    canonical_hardware,
    count_delivery,
    make_celery_app,
    queue_name,
)
from solbench.runner.celery_pool import check_reachable
from solbench.runner.celery_worker import WorkerOptions, start_worker
from solbench.runner.remote_jobs import register_run_task
from solbench.service.env_jobs import execute_env_call, queued_env_calls
from solbench.service.env_retention import EnvPruner
from solbench.service.job_claims import requeue_stale_jobs
from solbench.service.jobs import InfrastructureError, WorkerInfo, execute_submission
from solbench.service.models import EnvCall, Submission
from solbench.service.settings import ServiceSettings
from solbench.service.worker_hardware import hardware_figures

SUBMISSION_TASK = "solbench.service.execute_submission"
ENV_CALL_TASK = "solbench.service.execute_env_call"
RETRY_BACKOFF_S = 2.0
MAX_BACKOFF_S = 60.0
MAX_WAITS = 50
"""How often a delivery may come back to wait for another worker's claim to finish or go stale."""
log = logging.getLogger(__name__)


def submission_queue(hardware: str) -> str:
    return queue_name(SUBMISSION_QUEUE_PREFIX, hardware)


class CeleryQueue:
    """The server's side of the JobQueue protocol: each submission id goes to its hardware's queue.

    A thread requeues jobs whose worker stopped sending heartbeats and sends again those left
    queued for `resend_after_s` (on its first round: every queued one, in case a server died
    before sending). Sending twice is harmless: the claim lets one delivery run the job.
    """

    def __init__(self, settings: ServiceSettings, session_factory: sessionmaker[Session]):
        self.settings, self.session_factory = settings, session_factory
        assert settings.broker_url is not None, "the service queues with Celery only when it has a broker"
        broker = BrokerSettings(settings.broker_url)
        check_reachable(broker)
        self.app = make_celery_app(broker)
        self.queue = submission_queue(canonical_hardware(settings.hardware))
        self.message_settings = settings_for_workers(settings)
        self.resend_after_s = max(30.0, 4 * settings.stale_after_s)
        self._sent_at: dict[int, float] = {}
        self._calls_sent_at: dict[int, float] = {}
        self._lock = threading.Lock()
        self._pruner = EnvPruner(session_factory, settings.env_retention_days)
        self._stop = threading.Event()
        self._sweeper = threading.Thread(target=self._sweep_until_closed, daemon=True, name="celery-queue-sweeper")
        self._sweeper.start()

    def submit(self, submission_id: int) -> None:
        """Called from the API's request threads and the sweeper: one send at a time through the app's producer."""
        with self._lock:
            self.app.send_task(
                SUBMISSION_TASK, args=[submission_id, self.message_settings], queue=self.queue, ignore_result=True
            )
            self._sent_at[submission_id] = time.monotonic()

    def submit_env_call(self, call_id: int) -> None:
        """An agent env's call goes to the same queue: the workers of this hardware run it."""
        with self._lock:
            self.app.send_task(
                ENV_CALL_TASK, args=[call_id, self.message_settings], queue=self.queue, ignore_result=True
            )
            self._calls_sent_at[call_id] = time.monotonic()

    def close(self) -> None:
        self._stop.set()
        self._sweeper.join(timeout=10)
        self.app.close()

    def sweep(self) -> None:
        """Requeue jobs of dead workers; send again what has been queued unsent (or long ago); prune old envs."""
        requeue_stale_jobs(self.session_factory, self.settings.stale_after_s, self.settings.max_attempts)
        self._pruner.prune_if_due()
        with self.session_factory() as session:
            queued = session.scalars(
                select(Submission.id).where(Submission.status == "queued", Submission.deleted_at.is_(None))
            ).all()
        now = time.monotonic()
        still_queued = set(queued)
        with self._lock:
            due = [i for i in queued if now - self._sent_at.get(i, -1e18) > self.resend_after_s]
            self._sent_at = {i: t for i, t in self._sent_at.items() if i in still_queued}
        for submission_id in due:
            self.submit(submission_id)
        self._sweep_env_calls()

    def _sweep_env_calls(self) -> None:
        queued = queued_env_calls(self.session_factory)
        now = time.monotonic()
        with self._lock:
            due = [i for i in queued if now - self._calls_sent_at.get(i, -1e18) > self.resend_after_s]
            self._calls_sent_at = {i: t for i, t in self._calls_sent_at.items() if i in set(queued)}
        for call_id in due:
            self.submit_env_call(call_id)

    def _sweep_until_closed(self) -> None:
        interval = max(0.5, min(10.0, self.settings.stale_after_s / 2))
        while not self._stop.wait(interval):
            try:
                self.sweep()
            except Exception as error:
                log.warning("celery queue sweep: %s", error)


def settings_for_workers(settings: ServiceSettings) -> str:
    """The settings as JSON for the message; a database URL with a password stays off the broker (workers
    then need `--db`)."""
    url = settings.database_url
    return settings.model_copy(update={"db_url": None if make_url(url).password else url}).model_dump_json()


class _Databases:
    """One engine per database URL, opened in the worker's pool child on first use (never shared across a fork)."""

    def __init__(self):
        self._factories: dict[str, sessionmaker[Session]] = {}

    def session_factory(self, url: str) -> sessionmaker[Session]:
        if url not in self._factories:
            from solbench.service.db import open_database

            self._factories[url] = open_database(url, migrate=False)[1]
        return self._factories[url]


def register_submission_task(app, options: WorkerOptions, *, database_url: str | None, data_dir: Path | None) -> None:
    """Add the submission task and the env-call task to `app`, run with the server's settings and this worker's
    overrides. Both jobs are claimed in the database, so both tasks deliver and retry alike."""
    databases = _Databases()
    for name, execute_job, table in (
        (SUBMISSION_TASK, execute_submission, Submission),
        (ENV_CALL_TASK, execute_env_call, EnvCall),
    ):
        _register_job_task(app, name, options, databases, (database_url, data_dir), execute_job, table)


def _register_job_task(
    app,
    name: str,
    options: WorkerOptions,
    databases: _Databases,
    overrides: tuple[str | None, Path | None],
    execute_job: Callable[..., None],
    table: type[Submission] | type[EnvCall],
) -> None:
    database_url, data_dir = overrides

    @app.task(name=name, bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True, max_retries=None)
    def execute(task, job_id: int, settings_json: str) -> None:
        from solbench.evaluation.config import resolve_device

        settings = ServiceSettings.model_validate_json(settings_json)
        settings = settings.model_copy(
            update={k: v for k, v in (("db_url", database_url), ("data_dir", data_dir)) if v is not None}
        )
        if settings.db_url is None:
            log.error(
                "%s %s: the server's database URL has a password, so it is not sent over the broker: "
                "start this worker with --db URL",
                table.__tablename__,
                job_id,
            )
            raise task.retry(countdown=MAX_BACKOFF_S, max_retries=MAX_WAITS)
        attempt = task.request.retries
        if count_delivery(options.broker.url, f"{task.request.id}:{attempt}") > MAX_DELIVERIES:
            log.error(
                "%s %s: its workers died on each of %d deliveries; not run again (the server marks it failed)",
                table.__tablename__,
                job_id,
                MAX_DELIVERIES,
            )
            return
        worker = WorkerInfo(
            name=task.request.hostname or "",
            hardware=options.hardware,
            device=resolve_device(options.device or settings.evaluation.device),
            heartbeat_s=settings.heartbeat_s,
            figures=hardware_figures(options.hardware),
        )
        try:
            factory = databases.session_factory(settings.db_url)
            execute_job(factory, job_id, worker, settings=settings)
            elsewhere = _running_elsewhere(factory, table, job_id)
        except (InfrastructureError, DBAPIError) as error:  # the database unreachable is the infrastructure's too
            log.warning("%s %s: infrastructure failure on try %d: %s", table.__tablename__, job_id, attempt + 1, error)
            if attempt >= settings.max_attempts + MAX_WAITS:
                raise
            raise task.retry(exc=error, countdown=min(MAX_BACKOFF_S, RETRY_BACKOFF_S * 2**attempt)) from error
        if elsewhere and attempt < MAX_WAITS:
            raise task.retry(countdown=max(1.0, settings.stale_after_s / 2))


def _running_elsewhere(factory: sessionmaker[Session], table: type[Submission] | type[EnvCall], job_id: int) -> bool:
    """True when another worker holds the job's claim: this delivery must come back, not vanish."""
    with factory() as session:
        return session.scalar(select(table.status).where(table.id == job_id)) == "running"


def run_worker(options: WorkerOptions, *, database_url: str | None = None, data_dir: Path | None = None) -> None:
    """One `solbench worker`: the suite-run jobs and the submissions of its hardware, until stopped."""
    from solbench.evaluation.confinement import require_unprivileged_sandbox

    require_unprivileged_sandbox(options.allow_root_sandbox)
    check_reachable(options.broker)
    app = make_celery_app(options.broker)
    register_run_task(app, broker_url=options.broker.url, device=options.device)
    register_submission_task(app, options, database_url=database_url, data_dir=data_dir)
    start_worker(app, [queue_name(RUN_QUEUE_PREFIX, options.hardware), submission_queue(options.hardware)], options)
