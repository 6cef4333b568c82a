"""Per-user limits: submissions per mode per hour and per day, and how many may wait at once; agent env calls
per hour and per day, how many may wait at once, how many envs a user may make, and how many requests may wait
for a call's answer at once (`WaitingRequests`).

Counted from the submissions table (deleted ones included), so every server process sees the same
counts. A burst cannot race past a limit: `check_limits` first holds the user's row, which serialises
one user's submissions from the count to the commit of the new row with the database's own lock
(every server process shares it).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import exists, func, select, update
from sqlalchemy.orm import Session

from solbench.service.errors import ServiceError
from solbench.service.models import AgentEnv, EnvCall, Submission, User, utcnow
from solbench.service.settings import Limits

QUEUE_RETRY_S = 30
"""Retry-After when the user's queue cap is reached: about one evaluation's time."""


class LimitReached(ServiceError):
    """A request over a limit; `retry_after_s` is when the first slot frees (HTTP 429 + Retry-After), None where no
    time frees one (the message says what does)."""

    def __init__(self, message: str, retry_after_s: int | None):
        self.retry_after_s = retry_after_s
        super().__init__(message)


def _hold_user(session: Session, user: User) -> None:
    """Hold `user`'s submissions until this transaction ends: an UPDATE of their row takes PostgreSQL's row lock
    and SQLite's write lock, so a concurrent request of theirs waits here, then counts the row this one adds."""
    session.execute(update(User).where(User.id == user.id).values(name=User.name))


def check_limits(session: Session, user: User, mode: str, limits: Limits, now: datetime | None = None) -> None:
    """Raise LimitReached when `user` may not submit in `mode` now. Admins have no limits. Holds the user's row
    until the session's transaction ends: the caller adds the submission in that transaction."""
    if user.is_admin:
        return
    _hold_user(session, user)
    now = now or utcnow()
    for window, allowed, label in (
        (timedelta(hours=1), limits.per_hour.get(mode), "hour"),
        (timedelta(days=1), limits.per_day.get(mode), "day"),
    ):
        if allowed is None:
            continue
        since = now - window
        times = list(
            session.scalars(
                select(Submission.created_at)
                .where(Submission.user_id == user.id, Submission.mode == mode, Submission.created_at > since)
                .order_by(Submission.created_at)
            )
        )
        if len(times) >= allowed:
            frees_at = times[len(times) - allowed] + window
            wait = max(1, math.ceil((frees_at - now).total_seconds()))
            raise LimitReached(f"mode: {allowed} {mode} submissions per {label} reached; retry in {wait} s", wait)
    waiting = (
        session.scalar(
            select(func.count())
            .select_from(Submission)
            .where(
                Submission.user_id == user.id,
                Submission.status.in_(("queued", "running")),
                Submission.deleted_at.is_(None),
            )
        )
        or 0
    )
    if waiting >= limits.max_queued:
        raise LimitReached(
            f"queue: {waiting} of your submissions are waiting or running (at most "
            f"{limits.max_queued}); retry when one finishes",
            QUEUE_RETRY_S,
        )


def check_env_limits(
    session: Session, user: User, limits: Limits, *, new_env: bool, queues: bool = True, now: datetime | None = None
) -> None:
    """Raise LimitReached when `user` may not call an agent env now (or, with `new_env`, make one; without `queues`,
    a call answered at once, which the queue cap leaves alone). Admins have no limits. Holds the user's row until
    the transaction ends, as `check_limits` does."""
    if user.is_admin:
        return
    _hold_user(session, user)
    now = now or utcnow()
    for window, allowed, label in (
        (timedelta(hours=1), limits.env_calls_per_hour, "hour"),
        (timedelta(days=1), limits.env_calls_per_day, "day"),
    ):
        times = list(
            session.scalars(
                select(EnvCall.created_at)
                .where(EnvCall.user_id == user.id, EnvCall.created_at > now - window)
                .order_by(EnvCall.created_at)
            )
        )
        if len(times) >= allowed:
            wait = max(1, math.ceil((times[len(times) - allowed] + window - now).total_seconds()))
            raise LimitReached(f"env: {allowed} env calls per {label} reached; retry in {wait} s", wait)
    if new_env:
        finalized = exists().where(EnvCall.env_id == AgentEnv.id, EnvCall.kind == "finalize", EnvCall.status == "done")
        open_envs = (
            session.scalar(select(func.count()).select_from(AgentEnv).where(AgentEnv.user_id == user.id, ~finalized))
            or 0
        )
        if open_envs >= limits.max_envs:
            raise LimitReached(
                f"env: {open_envs} of your environments are not finalized (at most {limits.max_envs}); use one, or "
                "finalize one (POST /api/v1/envs/{id}/finalize) to make another",
                None,
            )
    if not queues:
        return
    waiting = (
        session.scalar(
            select(func.count())
            .select_from(EnvCall)
            .where(EnvCall.user_id == user.id, EnvCall.status.in_(("queued", "running")))
        )
        or 0
    )
    if waiting >= limits.max_queued_env_calls:
        raise LimitReached(
            f"env: {waiting} of your env calls are waiting or running (at most {limits.max_queued_env_calls}); "
            "retry when one finishes",
            QUEUE_RETRY_S,
        )


class WaitingRequests:
    """The requests of each user that wait for an env call's answer in this server process (each polls the database
    until the answer or its `?wait=` ends), at most `per_user` at once. Counted in the process, not the database:
    what they cost is this process's polling, and a count in the database would outlive a process that died."""

    def __init__(self, per_user: int):
        self.per_user = per_user
        self._ends: dict[int, list[float]] = {}
        self._lock = threading.Lock()

    def waiting(self, user_id: int) -> int:
        with self._lock:
            return len(self._ends.get(user_id, ()))

    def enter(self, user: User, wait_s: float) -> WaitSlot:
        """A slot for a request of `user` that waits up to `wait_s`, held until the slot's `with` block ends. Raises
        LimitReached when the user's slots are all held; Retry-After is when the first of them ends. A request that
        does not wait (`wait_s` 0) and an admin's take none."""
        if wait_s <= 0 or user.is_admin:
            return WaitSlot(None)
        now = time.monotonic()
        with self._lock:
            ends = self._ends.setdefault(user.id, [])
            if len(ends) >= self.per_user:
                wait = max(1, math.ceil(min(ends) - now))
                raise LimitReached(
                    f"wait: {len(ends)} of your requests are waiting for env calls' answers (at most "
                    f"{self.per_user} at once); retry in {wait} s, or ask with ?wait=0",
                    wait,
                )
            ends.append(now + wait_s)
        return WaitSlot(lambda: self._leave(user.id, now + wait_s))

    def _leave(self, user_id: int, end: float) -> None:
        with self._lock:
            ends = self._ends[user_id]
            ends.remove(end)
            if not ends:
                del self._ends[user_id]


class WaitSlot:
    """A held place among a user's waiting requests (`WaitingRequests.enter`); the `with` block's end frees it."""

    def __init__(self, release: Callable[[], None] | None):
        self._release = release

    def __enter__(self) -> WaitSlot:
        return self

    def __exit__(self, *_) -> None:
        if self._release is not None:
            self._release()
            self._release = None
