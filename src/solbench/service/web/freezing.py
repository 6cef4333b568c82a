"""Freezing a problem set (`solbench admin freeze SET`): from then on its submissions' code is public."""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from solbench.service import queries
from solbench.service.errors import ServiceError


def freeze_problem_set(session_factory: sessionmaker[Session], set_name: str, *, title: str | None = None) -> None:
    """Freeze `set_name` now; raises ServiceError naming the known sets when there is no such set."""
    with session_factory.begin() as session:
        known = sorted(set(queries.sets_of_problems(session).values()))
        if set_name not in known:
            raise ServiceError(f"SET {set_name!r}: no such problem set (known: {', '.join(known) or 'none'})")
        queries.freeze_set(session, set_name, title=title)
