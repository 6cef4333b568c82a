"""How long agent environments are kept: an env untouched for `env_retention_days`, with no call waiting or
running, is deleted with its calls.

An env's state (its history) and its calls' answers (traces included) only grow, and a rollout fleet makes many
envs it never finalizes. The queue's reaper (EmbeddedQueue's watcher, CeleryQueue's sweeper) prunes them through
`EnvPruner`, at most every `PRUNE_EVERY_S`: no daemon of its own. `updated_at` is written by every call and every
reset, so "untouched" means no call of any kind; the retention is at least a day, so every call the daily rate
limits count is kept.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

from sqlalchemy import delete, exists, select
from sqlalchemy.orm import Session, sessionmaker

from solbench.service.agent_envs import ACTIVE
from solbench.service.models import AgentEnv, EnvCall, utcnow

BATCH = 500
PRUNE_EVERY_S = 600.0
"""How often the reaper prunes: the retention is counted in days, so a few minutes late costs nothing."""
log = logging.getLogger(__name__)


def prune_old_envs(session_factory: sessionmaker[Session], retention_days: float, now: datetime | None = None) -> int:
    """Delete the envs untouched for `retention_days` that have no call queued or running, with their calls, in
    batches of `BATCH` (one transaction each, within SQLite's limit on bound values). Returns how many."""
    cutoff = (now or utcnow()) - timedelta(days=retention_days)
    active = exists().where(EnvCall.env_id == AgentEnv.id, EnvCall.status.in_(ACTIVE))
    pruned = 0
    while True:
        with session_factory.begin() as session:
            # Locked as selected (skipping rows a request holds): a request that queues a call on one of them waits
            # for this transaction and then finds the env gone (EnvGone, 404) instead of being answered 202 for a
            # call deleted a moment later. SQLite has no row locks; its one writer at a time gives the same order.
            candidates = select(AgentEnv.id).where(AgentEnv.updated_at < cutoff, ~active).limit(BATCH)
            old = list(session.scalars(candidates.with_for_update(of=AgentEnv, skip_locked=True)))
            if old:
                session.execute(delete(EnvCall).where(EnvCall.env_id.in_(old)))
                session.execute(delete(AgentEnv).where(AgentEnv.id.in_(old)))
        pruned += len(old)
        if len(old) < BATCH:
            return pruned


class EnvPruner:
    """`prune_old_envs` on a reaper's schedule: at its first round, then at most every `every_s`."""

    def __init__(
        self, session_factory: sessionmaker[Session], retention_days: float | None, every_s: float = PRUNE_EVERY_S
    ):
        self._session_factory, self._retention_days, self._every_s = session_factory, retention_days, every_s
        self._next = 0.0

    def prune_if_due(self) -> int:
        if self._retention_days is None or time.monotonic() < self._next:
            return 0
        self._next = time.monotonic() + self._every_s
        pruned = prune_old_envs(self._session_factory, self._retention_days)
        if pruned:
            log.info("pruned %d agent envs untouched for %s days", pruned, self._retention_days)
        return pruned
