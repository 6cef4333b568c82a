"""GET /users/{name}: a user's standings, best scores and submissions."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException
from sqlalchemy.orm import Session

from solbench.service import queries
from solbench.service.api.deps import optional_user, session
from solbench.service.models import User

router = APIRouter(tags=["users"])


@router.get("/users/{name}", response_model=queries.UserPage, responses={404: {}})
def user(name: str, viewer: User | None = Depends(optional_user), db: Session = Depends(session)):
    """Others see only ranked submissions; the user and admins see all of them."""
    page = queries.user_page(db, name, viewer=viewer)
    if page is None:
        raise HTTPException(404, f"user {name!r}: no such user")
    return page
