"""EmbeddedQueue: N evaluation workers as local child processes, fed from the database.

Each child (`python -m solbench.service.embedded`, settings handed down as JSON in the environment)
polls for the oldest queued job, a submission or an agent env's call, and runs it through
`jobs.execute_submission` or `env_jobs.execute_env_call`; each claim is one conditional UPDATE: safe
across processes on SQLite and PostgreSQL alike. The parent keeps the children alive (a dead one is
restarted), requeues jobs whose worker stopped sending heartbeats and prunes old agent envs (env_retention.py).
A child exits when its parent is gone.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

from sqlalchemy.orm import Session, sessionmaker

from solbench.service.env_jobs import execute_env_call, oldest_queued_job
from solbench.service.env_retention import EnvPruner
from solbench.service.job_claims import requeue_stale_jobs
from solbench.service.jobs import (
    InfrastructureError,
    WorkerInfo,
    execute_submission,
    record_worker,
    record_worker_stopped,
)
from solbench.service.settings import ServiceSettings
from solbench.service.worker_hardware import hardware_figures

PARENT_VARIABLE = "SOLBENCH_EMBEDDED_PARENT"
INDEX_VARIABLE = "SOLBENCH_EMBEDDED_INDEX"
MAX_RESTARTS = 20
"""A child that keeps dying is not restarted forever: after this many restarts in total, none."""
WATCH_S = 0.5
"""How often the parent looks for dead children: a dead child's job is queued again within about this."""


def worker_name(pid: int, index: int) -> str:
    """The name a child records its claims under (<host>-<pid>-embedded-<n>): the parent finds a dead child's jobs
    by it."""
    return f"{socket.gethostname()}-{pid}-embedded-{index}"


class EmbeddedQueue:
    """The JobQueue of `solbench serve` without a broker: `settings.workers` local worker processes."""

    def __init__(self, settings: ServiceSettings, session_factory: sessionmaker[Session]):
        self.settings = settings
        self.session_factory = session_factory
        self._children: list[subprocess.Popen | None] = [None] * settings.workers
        self._restarts = 0
        self._pruner = EnvPruner(session_factory, settings.env_retention_days)
        self._stop = threading.Event()
        for index in range(settings.workers):
            self._children[index] = self._spawn(index)
        self._watcher = threading.Thread(target=self._watch, daemon=True, name="embedded-queue-watcher")
        self._watcher.start()

    @property
    def pids(self) -> list[int]:
        return [child.pid for child in self._children if child is not None and child.poll() is None]

    def submit(self, submission_id: int) -> None:
        """Nothing to hand over: the workers take queued submissions from the database."""

    def submit_env_call(self, call_id: int) -> None:
        """Nothing to hand over: the workers take queued env calls from the database too."""

    def close(self) -> None:
        self._stop.set()
        self._watcher.join(timeout=10)
        for child in self._children:
            if child is not None and child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for child in self._children:
            if child is None:
                continue
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(timeout=10)

    def _spawn(self, index: int) -> subprocess.Popen:
        env = {**os.environ, **self.settings.to_env(), PARENT_VARIABLE: str(os.getpid()), INDEX_VARIABLE: str(index)}
        return subprocess.Popen([sys.executable, "-m", "solbench.service.embedded"], env=env, stdin=subprocess.DEVNULL)

    def _watch(self) -> None:
        reap_every = max(WATCH_S, min(5.0, self.settings.stale_after_s / 4))
        next_reap = time.monotonic() + reap_every
        while not self._stop.wait(WATCH_S):
            try:
                if time.monotonic() >= next_reap:  # jobs of workers elsewhere that stopped sending heartbeats
                    requeue_stale_jobs(self.session_factory, self.settings.stale_after_s, self.settings.max_attempts)
                    self._pruner.prune_if_due()
                    next_reap = time.monotonic() + reap_every
                for index, child in enumerate(self._children):
                    if child is not None and child.poll() is not None and not self._stop.is_set():
                        self._replace(index, child)
            except Exception as error:
                print(f"solbench serve: reaper: {error}", file=sys.stderr)

    def _replace(self, index: int, dead: subprocess.Popen) -> None:
        """A child died (killed, crashed): its job goes back to the queue now, and a new child takes its place."""
        name = worker_name(dead.pid, index)
        requeue_stale_jobs(self.session_factory, 0, self.settings.max_attempts, worker_name=name)
        record_worker_stopped(self.session_factory, name)
        if self._restarts < MAX_RESTARTS:
            self._restarts += 1
            self._children[index] = self._spawn(index)
        else:
            self._children[index] = None


def run_worker(
    settings: ServiceSettings,
    worker: WorkerInfo,
    *,
    should_stop,
    parent_pid: int | None = None,
    busy: threading.Event | None = None,
) -> None:
    """The loop of one embedded worker: take the oldest queued job (a submission or an env call), run it, repeat
    until `should_stop()`. `busy` is set while a job runs."""
    busy = busy or threading.Event()
    from solbench.service.db import open_database

    _, session_factory = open_database(settings.database_url, migrate=False)
    record_worker(session_factory, worker)
    try:
        _take_jobs(settings, session_factory, worker, should_stop, parent_pid, busy)
    finally:
        record_worker_stopped(session_factory, worker.name)


def _take_jobs(
    settings: ServiceSettings,
    session_factory,
    worker: WorkerInfo,
    should_stop,
    parent_pid: int | None,
    busy: threading.Event,
) -> None:
    last_seen = time.monotonic()
    while not should_stop():
        if parent_pid is not None and os.getppid() != parent_pid:
            return  # the server is gone
        job = oldest_queued_job(session_factory)
        if job is None:
            time.sleep(settings.poll_s)
            if time.monotonic() - last_seen > settings.heartbeat_s:
                record_worker(session_factory, worker)
                last_seen = time.monotonic()
            continue
        busy.set()
        try:
            if job.kind == "env_call":
                execute_env_call(session_factory, job.id, worker, settings=settings)
            else:
                execute_submission(session_factory, job.id, worker, settings=settings)
        except InfrastructureError as error:
            print(f"solbench worker {worker.name}: {error}", file=sys.stderr)
            time.sleep(settings.poll_s)
        finally:
            busy.clear()
        last_seen = time.monotonic()


def _main() -> None:
    from solbench.evaluation.config import resolve_device

    settings = ServiceSettings.from_env()
    stopping, busy = threading.Event(), threading.Event()

    def stop(*_) -> None:
        # Between jobs the loop sees the flag; during one, SystemExit ends the evaluation now and
        # execute_submission puts the job back in the queue (the server is shutting down).
        if stopping.is_set() or busy.is_set():
            raise SystemExit(0)
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    index = os.environ.get(INDEX_VARIABLE, "0")
    device = resolve_device(settings.evaluation.device)
    worker = WorkerInfo(
        name=worker_name(os.getpid(), int(index)),
        hardware=settings.hardware,
        device=device,
        heartbeat_s=settings.heartbeat_s,
        beats_when_idle=True,
        figures=hardware_figures(settings.hardware),
    )
    parent = os.environ.get(PARENT_VARIABLE)
    run_worker(settings, worker, should_stop=stopping.is_set, parent_pid=int(parent) if parent else None, busy=busy)


if __name__ == "__main__":
    _main()
