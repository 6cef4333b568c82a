"""Choosing the job queue: embedded worker processes, or Celery workers when a broker is set.

Both queues are built on `solbench.service.jobs` (claims, heartbeats, `execute_submission`); the choice
lives here, above the two and jobs, so that jobs imports neither (tests/test_layers.py: no import circles).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from solbench.service.jobs import JobQueue
    from solbench.service.settings import ServiceSettings


def make_queue(settings: ServiceSettings, session_factory: sessionmaker[Session]) -> JobQueue:
    """Embedded worker processes without a broker; Celery workers (solbench.service.celery_queue) with one."""
    if settings.broker_url:
        from solbench.service.celery_queue import CeleryQueue

        return CeleryQueue(settings, session_factory)
    from solbench.service.embedded import EmbeddedQueue

    return EmbeddedQueue(settings, session_factory)
