"""GET /status: the queue, the workers and their hardware, evaluations per hour."""

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
    import solbench
    from solbench.evaluate.result_cache import harness_version

    return ServerStatus(version=solbench.__version__, harness_version=harness_version(),
                        hardware=svc.settings.hardware, queue="celery" if svc.settings.broker_url else "embedded",
                        status=queries.status(db))
