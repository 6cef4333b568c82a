"""GET /status: the queue, the workers and their hardware, evaluations per hour; GET /limits: what a request and a
user may do (a client checks a submission's size against it before sending)."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel
from sqlalchemy.orm import Session

from solbench.service import queries
from solbench.service.api.deps import service, session

router = APIRouter(tags=["status"])


class ServerStatus(BaseModel):
    version: str
    harness_version: str
    hardware: str
    """The hardware id results are scored on."""
    queue: str
    """embedded (local worker processes) or celery (a broker)."""
    status: queries.StatusData


@router.get("/status", response_model=ServerStatus)
def server_status(db: Session = Depends(session), svc=Depends(service)) -> ServerStatus:
    from solbench.evaluation.result_cache import harness_version
    from solbench.version import __version__

    return ServerStatus(
        version=__version__,
        harness_version=harness_version(),
        hardware=svc.settings.hardware,
        queue="celery" if svc.settings.broker_url else "embedded",
        status=queries.status(db),
    )


class ServerLimits(BaseModel):
    max_body_bytes: int
    """Largest request body accepted; a larger one is answered 413 (`solbench submit` checks before sending)."""
    per_hour: dict[str, int]
    """Submissions per user and mode in any hour (admins have no limits)."""
    per_day: dict[str, int]
    """Submissions per user and mode in any 24 hours."""
    max_queued: int
    """Submissions of one user that may wait or run at once."""
    env_calls_per_hour: int
    """Calls on one user's agent environments (making one, reset, step, test, finalize) in any hour."""
    env_calls_per_day: int
    max_queued_env_calls: int
    """Calls on one user's agent environments that may wait or run at once."""
    max_envs: int
    """Agent environments one user may have that are not finalized."""
    max_waiting_env_requests: int
    """Requests of one user that may wait for env calls' answers at once (`?wait=` above 0), per server process."""


@router.get("/limits", response_model=ServerLimits)
def server_limits(svc=Depends(service)) -> ServerLimits:
    limits = svc.settings.limits
    return ServerLimits(
        max_body_bytes=limits.max_body_bytes,
        per_hour=limits.per_hour,
        per_day=limits.per_day,
        max_queued=limits.max_queued,
        env_calls_per_hour=limits.env_calls_per_hour,
        env_calls_per_day=limits.env_calls_per_day,
        max_queued_env_calls=limits.max_queued_env_calls,
        max_envs=limits.max_envs,
        max_waiting_env_requests=limits.max_waiting_env_requests,
    )
