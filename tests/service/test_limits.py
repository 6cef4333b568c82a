"""Rate limits and the queue cap, counted in the database (fast: rows written directly)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from solbench.service.limits import LimitReached, check_limits
from solbench.service.models import ProblemVersion, ServedProblem, Submission, User, utcnow
from solbench.service.settings import Limits

LIMITS = Limits(per_hour={"ranked": 2}, per_day={"ranked": 3}, max_queued=2)


@pytest.fixture
def seeded(database):
    with database.begin() as session:
        session.add_all([User(name="ann"), User(name="root", is_admin=True), ServedProblem(name="p", set_name="L1")])
        session.flush()
        session.add(
            ProblemVersion(
                problem_id=1, version_hash="0" * 64, definition={}, workloads=[], held_out=[], source_dir="/"
            )
        )
    return database


def _add(factory, user_id: int, ago: timedelta, status: str = "done", mode: str = "ranked") -> None:
    with factory.begin() as session:
        session.add(
            Submission(
                user_id=user_id,
                problem_version_id=1,
                mode=mode,
                status=status,
                solution={},
                code_hash="0" * 64,
                created_at=utcnow() - ago,
                deleted_at=utcnow() if status == "cancelled" else None,
            )
        )


def _check(factory, name: str, mode: str = "ranked", limits: Limits = LIMITS) -> None:
    from sqlalchemy import select

    with factory() as session:
        check_limits(session, session.scalar(select(User).where(User.name == name)), mode, limits)


def test_the_hourly_limit_says_when_the_oldest_counted_submission_leaves_the_window(seeded):
    _add(seeded, 1, timedelta(minutes=50))
    _check(seeded, "ann")
    _add(seeded, 1, timedelta(minutes=10), status="cancelled")  # deleted: still counted
    with pytest.raises(LimitReached, match="per hour") as refused:
        _check(seeded, "ann")
    assert 540 <= refused.value.retry_after_s <= 660  # the 50-minute-old one frees its slot in ~10 minutes
    _check(seeded, "ann", mode="test")  # no limit for another mode here
    _check(seeded, "root")  # admins have none


def test_the_daily_limit_and_the_queue_cap(seeded):
    for hours in (20, 10, 5):
        _add(seeded, 1, timedelta(hours=hours))
    with pytest.raises(LimitReached, match="per day") as refused:
        _check(seeded, "ann")
    assert 3 * 3600 <= refused.value.retry_after_s <= 4 * 3600 + 60
    _add(seeded, 1, timedelta(minutes=1), status="queued", mode="test")
    _add(seeded, 1, timedelta(minutes=1), status="running", mode="test")
    with pytest.raises(LimitReached, match="queue"):
        _check(seeded, "ann", mode="test")


def test_a_modes_limits_count_only_that_modes_submissions(seeded):
    """Each mode has its own hourly and daily count: private submissions never use up the test allowance."""
    limits = Limits(per_hour={"test": 3, "private": 50}, per_day={"test": 4, "private": 50}, max_queued=100)
    for minutes in (1, 2, 3, 4):
        _add(seeded, 1, timedelta(minutes=minutes), mode="private")
    _check(seeded, "ann", mode="test", limits=limits)
    for minutes in (5, 6, 7):
        _add(seeded, 1, timedelta(minutes=minutes), mode="test")
    with pytest.raises(LimitReached, match="3 test submissions per hour"):
        _check(seeded, "ann", mode="test", limits=limits)
    _check(seeded, "ann", mode="private", limits=limits)


def test_admins_have_no_limits(seeded):
    """As check_limits documents: an admin over the hourly, daily and queue limits may still submit."""
    for user_id in (1, 2):  # ann (not an admin) and root (one), each over every limit of LIMITS
        for minutes in (1, 2, 3, 4):
            _add(seeded, user_id, timedelta(minutes=minutes), status="queued")
    with pytest.raises(LimitReached, match="per hour"):
        _check(seeded, "ann")
    _check(seeded, "root")
