"""What the routers (and the web pages) share: the service, a database session, the caller."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import Depends, HTTPException, Request
from sqlalchemy.orm import Session

from solbench.service.auth import authenticate
from solbench.service.models import User


def service(request: Request):
    return request.app.state.service


def session(request: Request) -> Iterator[Session]:
    """One session per request; handlers that write commit themselves."""
    with request.app.state.service.session_factory() as db:
        yield db


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def optional_user(request: Request, db: Session = Depends(session)) -> User | None:
    """The caller when a valid token is sent, else None; a wrong or revoked token is still a 401."""
    token = _bearer(request)
    if token is None:
        return None
    return _check(authenticate(db, token))


def current_user(request: Request, db: Session = Depends(session)) -> User:
    token = _bearer(request)
    if token is None:
        raise HTTPException(
            401,
            "Authorization: send 'Authorization: Bearer TOKEN' (solbench admin add-user prints a token)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return _check(authenticate(db, token))


def _check(user: User | None) -> User:
    if user is None:
        raise HTTPException(401, "Authorization: unknown or revoked token", headers={"WWW-Authenticate": "Bearer"})
    if user.banned:
        raise HTTPException(403, f"Authorization: user {user.name} is banned")
    return user


def admin_user(user: User = Depends(current_user)) -> User:
    """The caller, when an admin: anyone else is refused (403; 401 without a valid token)."""
    if not user.is_admin:
        raise HTTPException(403, f"Authorization: user {user.name} is not an admin")
    return user
