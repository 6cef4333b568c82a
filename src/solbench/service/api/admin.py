"""GET /admin/...: what only admins may read. Anyone else is refused: 401 without a valid token, 403 with one."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from sqlalchemy.orm import Session

from solbench.service.api.deps import admin_user, session
from solbench.service.hacked import FlaggedSubmission, flagged_submissions
from solbench.service.models import User

router = APIRouter(tags=["admin"])


@router.get("/admin/flagged", response_model=list[FlaggedSubmission], responses={401: {}, 403: {}})
def flagged(
    limit: int = Query(100, ge=1, le=1000), _admin: User = Depends(admin_user), db: Session = Depends(session)
) -> list[FlaggedSubmission]:
    """Hacked submissions, newest first: flagged by a guard, by the speed-of-light floor or by an admin
    (`solbench admin flag`), with why. They are on no board, and only their authors and admins can read them."""
    return flagged_submissions(db, limit=limit)
