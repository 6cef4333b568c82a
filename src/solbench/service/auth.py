"""Accounts and API tokens. A token is shown once, when it is made; the database keeps its sha256 only, so a
leaked database does not leak tokens. Requests carry it as `Authorization: Bearer TOKEN`."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from solbench.service.errors import ServiceError
from solbench.service.models import ApiToken, User, utcnow

TOKEN_PREFIX = "sb_"
USER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class NewAccount:
    name: str
    token: str
    is_admin: bool


def add_user(session_factory: sessionmaker[Session], name: str, *, admin: bool = False) -> NewAccount:
    """A new user with a fresh token (an existing user gets another token; `admin` only ever grants)."""
    if not USER_NAME.fullmatch(name):
        raise ServiceError(
            f"NAME {name!r}: use letters, digits, '_', '.', '-' (at most 64, starting with a letter or digit)"
        )
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with session_factory.begin() as session:
        user = session.scalar(select(User).where(User.name == name))
        if user is None:
            user = User(name=name, is_admin=admin, banned=False)
            session.add(user)
            session.flush()
        user.is_admin = user.is_admin or admin
        session.add(ApiToken(user_id=user.id, token_hash=hash_token(token)))
        return NewAccount(name=name, token=token, is_admin=user.is_admin)


def revoke_tokens(session_factory: sessionmaker[Session], name: str, token: str | None = None) -> int:
    """Revoke `token` of user `name`, or every token of theirs; returns how many were revoked."""
    with session_factory.begin() as session:
        user = _user(session, name)
        query = update(ApiToken).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        if token is not None:
            query = query.where(ApiToken.token_hash == hash_token(token))
        # An UPDATE returns a CursorResult, which has rowcount; the stubs type execute() as Result.
        return session.execute(query.values(revoked_at=utcnow())).rowcount  # pyright: ignore[reportAttributeAccessIssue]


def set_banned(session_factory: sessionmaker[Session], name: str, banned: bool = True) -> None:
    """A banned user cannot authenticate, and their results leave every leaderboard."""
    with session_factory.begin() as session:
        _user(session, name).banned = banned


def authenticate(session: Session, token: str) -> User | None:
    """The user a live token belongs to; None for an unknown or revoked token."""
    return session.scalar(
        select(User).join(ApiToken).where(ApiToken.token_hash == hash_token(token), ApiToken.revoked_at.is_(None))
    )


def _user(session: Session, name: str) -> User:
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        raise ServiceError(f"NAME {name!r}: no such user")
    return user
