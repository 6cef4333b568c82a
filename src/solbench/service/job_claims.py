"""The claim on a queued job, the one lifecycle submissions (jobs.py) and agent env calls (env_jobs.py) share.

A job row (`Submission` or `EnvCall`: the same status, claim and try columns) moves queued -> running -> a
finished status. Why each step is written the way it is:

- claimed with ONE conditional UPDATE (queued, or running with a stale heartbeat, -> running under a fresh claim
  token), so two workers never run it together on SQLite or PostgreSQL;
- a stale running job is taken over only while it has tries left (`attempts < max_attempts`): a job that kills its
  worker every time would otherwise be claimed again for ever by each redelivery of its message; past the bound
  the reaper (`requeue_stale_jobs`) marks it failed with a reason its author reads;
- the outcome is stored only while the claim is still held (`finish_claimed`), so a job run twice stores once;
- after an infrastructure failure the job is queued again or, its tries used up, failed (`retry_or_fail`); a
  worker that is stopping gives its job back without counting the try.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select, true, update
from sqlalchemy.orm import Session, sessionmaker

from solbench.service.models import EnvCall, Submission, utcnow

JobRow = Submission | EnvCall
JobTable = type[Submission] | type[EnvCall]
JOB_TABLES: tuple[JobTable, ...] = (Submission, EnvCall)
MAX_ERROR_CHARS = 2000
log = logging.getLogger(__name__)


def job_label(table: JobTable) -> str:
    return "submission" if table is Submission else "env call"


def _claimable(table: JobTable) -> ColumnElement[bool]:
    """A deleted submission is never handed to a worker; an env call is never deleted."""
    return Submission.deleted_at.is_(None) if table is Submission else true()


def claim(
    session_factory: sessionmaker[Session],
    table: JobTable,
    job_id: int,
    worker_name: str,
    *,
    stale_after_s: float,
    max_attempts: int,
) -> str | None:
    """Take the job for `worker_name`: a claim token, or None when it is not queued (finished, running elsewhere
    with a live heartbeat, deleted, or stale with its tries used up)."""
    token, now = secrets.token_hex(16), utcnow()
    with session_factory.begin() as session:
        # An UPDATE returns a CursorResult, which has rowcount; the stubs type execute() as Result.
        claimed = session.execute(
            update(table)
            .where(
                table.id == job_id,
                _claimable(table),
                or_(
                    table.status == "queued",
                    and_(
                        table.status == "running",
                        table.heartbeat_at < now - timedelta(seconds=stale_after_s),
                        table.attempts < max_attempts,
                    ),
                ),
            )
            .values(
                status="running",
                claim_token=token,
                worker=worker_name,
                started_at=now,
                heartbeat_at=now,
                attempts=table.attempts + 1,
            )
            .execution_options(synchronize_session=False)
        ).rowcount  # pyright: ignore[reportAttributeAccessIssue]
    return token if claimed == 1 else None


def finish_claimed(session: Session, table: JobTable, job_id: int, token: str, **values: Any) -> bool:
    """Mark the job finished with `values` (its status among them) in the caller's transaction, only while `token`
    still holds its claim. False when the claim was lost (taken over, or the submission deleted): store nothing."""
    released = session.execute(
        update(table)
        .where(table.id == job_id, table.claim_token == token, table.status == "running", _claimable(table))
        .values(**{"claim_token": None, "error": None, "finished_at": utcnow(), **values})
        .execution_options(synchronize_session=False)
    ).rowcount  # pyright: ignore[reportAttributeAccessIssue]
    return released == 1


def give_back(
    session_factory: sessionmaker[Session],
    table: JobTable,
    job_id: int,
    token: str,
    max_attempts: int,
    message: str | None,
) -> None:
    """After an infrastructure failure (`message`): queued again for another try, or failed once the tries are used
    up. Without a message (the worker was stopped) it is queued again and the try is not counted."""
    with session_factory.begin() as session:
        row = session.get(table, job_id)
        if row is None or row.claim_token != token:
            return
        if message is None:
            row.claim_token, row.status, row.attempts = None, "queued", max(0, row.attempts - 1)
            return
        retry_or_fail(row, message, max_attempts)


def retry_or_fail(row: JobRow, message: str, max_attempts: int) -> None:
    """The one rule after a failed try: queued again while tries are left, else failed, with an error that says
    the tries are used up and what ended the last one (a submission's author reads it; an env call's stays the
    operator's, and is logged)."""
    row.claim_token = None
    if row.attempts < max_attempts:
        row.status, row.error = "queued", message[:MAX_ERROR_CHARS]
        return
    row.status, row.finished_at = "failed", utcnow()
    row.error = (
        f"not run again: each of its {row.attempts} tries (at most {max_attempts}) ended without a result, "
        f"for a reason outside the solution or because it stopped its worker; the last: {message}"
    )[:MAX_ERROR_CHARS]
    log.warning("%s %s failed after %s tries: %s", job_label(type(row)), row.id, row.attempts, message)


def requeue_stale_jobs(
    session_factory: sessionmaker[Session], stale_after_s: float, max_attempts: int, *, worker_name: str | None = None
) -> int:
    """Running jobs of both kinds whose heartbeat stopped (or, with `worker_name`, every running job of a worker
    known to have exited, at once): queued again, or failed after `max_attempts` tries. Returns how many."""
    cutoff = utcnow() - timedelta(seconds=stale_after_s)
    changed = 0
    with session_factory.begin() as session:
        for table in JOB_TABLES:
            query = select(table).where(table.status == "running")
            query = query.where(table.worker == worker_name if worker_name is not None else table.heartbeat_at < cutoff)
            for row in session.scalars(query).all():
                ended = "died" if worker_name is not None else "stopped answering"
                retry_or_fail(row, f"worker {row.worker} {ended}", max_attempts)
                changed += 1
    return changed


class Heartbeat:
    """Refreshes a claimed job's heartbeat while it runs, so the reaper leaves a live job alone. `on_beat` runs in
    each beat's transaction (a submission's worker row, its deletion)."""

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        table: JobTable,
        job_id: int,
        token: str,
        interval_s: float,
        on_beat: Callable[[Session], None] | None = None,
    ):
        self._session_factory, self._table, self._job_id, self._token = session_factory, table, job_id, token
        self._interval_s, self._on_beat = interval_s, on_beat
        self._stop = threading.Event()
        label = job_label(table).replace(" ", "-")
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"{label}-heartbeat-{job_id}")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        table = self._table
        while not self._stop.wait(self._interval_s):
            try:
                with self._session_factory.begin() as session:
                    session.execute(
                        update(table)
                        .where(table.id == self._job_id, table.claim_token == self._token)
                        .values(heartbeat_at=utcnow())
                        .execution_options(synchronize_session=False)
                    )
                    if self._on_beat is not None:
                        self._on_beat(session)
            except Exception:  # a missed beat (the database busy): the next one refreshes it
                continue
