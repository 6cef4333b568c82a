"""Submissions evaluated by Celery workers on other machines (`solbench serve --broker redis://…`).

The server sends each accepted submission's id to the queue of its hardware; any `solbench worker`
of that hardware takes it and calls `jobs.execute_submission`, which claims the job, evaluates
it and writes its one result in one transaction. The message is acknowledged only afterwards
(`runner.celery_app`): if the worker dies the message goes to another worker, and because
`execute_submission` is idempotent a job that runs twice still leaves one result.

Retries: an `InfrastructureError` (the database or the sandbox machinery failing, not the solution)
is retried a bounded number of times with backoff. A solution's own failure (a crash, a wrong
answer, a timeout) is a result and is never retried. A job whose workers keep dying under it is
delivered at most `MAX_DELIVERIES` times.
"""

from __future__ import annotations

import logging

from solbench.runner.celery_app import (MAX_DELIVERIES, RUN_QUEUE_PREFIX, SUBMISSION_QUEUE_PREFIX, BrokerSettings, count_delivery,
                                        make_celery_app, queue_name)
from solbench.runner.celery_pool import check_reachable
from solbench.runner.celery_worker import WorkerOptions, start_worker
from solbench.runner.remote_jobs import register_run_task

SUBMISSION_TASK = "solbench.service.execute_submission"
RETRY_BACKOFF_S = 5.0
log = logging.getLogger(__name__)


def submission_queue(hardware: str) -> str:
    return queue_name(SUBMISSION_QUEUE_PREFIX, hardware)


class CeleryQueue:
    """The server's side of the JobQueue protocol: each submission id goes to its hardware's queue."""

    def __init__(self, settings, session_factory=None):
        self.settings = settings
        self.queue = submission_queue(settings.hardware)
        self.app = make_celery_app(BrokerSettings(settings.broker_url))

    def submit(self, submission_id: int) -> None:
        self.app.send_task(SUBMISSION_TASK, args=[submission_id], queue=self.queue, ignore_result=True)

    def close(self) -> None:
        self.app.close()


def register_submission_task(app, *, broker_url: str, database_url: str, worker_hardware: str,
                             device: str | None, max_attempts: int) -> None:
    """Add the submission task to `app`; the database is opened in the worker's pool child, on first use."""
    opened: dict = {}

    def session_factory():
        if "factory" not in opened:  # after the fork: a connection pool must not be shared with the parent
            from solbench.service.db import open_database

            opened["engine"], opened["factory"] = open_database(database_url, migrate=False)
        return opened["factory"]

    @app.task(name=SUBMISSION_TASK, bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
    def execute(task, submission_id: int) -> None:
        from solbench.service.jobs import InfrastructureError, WorkerInfo, execute_submission

        attempt = task.request.retries
        if count_delivery(broker_url, f"{task.request.id}:{attempt}") > MAX_DELIVERIES:
            log.error("submission %s: its workers died on each of %d deliveries; not run again", submission_id,
                      MAX_DELIVERIES)
            return
        worker = WorkerInfo(name=task.request.hostname or "", hardware=worker_hardware, device=device or "auto")
        try:
            execute_submission(session_factory(), submission_id, worker)
        except InfrastructureError as error:
            log.warning("submission %s: infrastructure failure (attempt %d of %d): %s", submission_id, attempt + 1,
                        max_attempts, error)
            raise task.retry(exc=error, max_retries=max_attempts - 1, countdown=RETRY_BACKOFF_S * 2 ** attempt)


def run_worker(options: WorkerOptions, *, database_url: str | None, max_attempts: int = 3) -> None:
    """One `solbench worker`: suite-run jobs of its hardware and, given a database, submissions of its hardware."""
    check_reachable(options.broker)
    app = make_celery_app(options.broker)
    register_run_task(app, broker_url=options.broker.url, device=options.device)
    queues = [queue_name(RUN_QUEUE_PREFIX, options.hardware)]
    if database_url:
        register_submission_task(app, broker_url=options.broker.url, database_url=database_url,
                                 worker_hardware=options.hardware, device=options.device, max_attempts=max_attempts)
        queues.append(submission_queue(options.hardware))
    start_worker(app, queues, options)
