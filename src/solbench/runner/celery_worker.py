"""Starting a Celery worker process for one hardware id and one device (`solbench worker`).

The worker runs its jobs in one pool child (concurrency 1: one job at a time per device), so a
job that kills its process (the OOM killer) costs only that child: the worker requeues the job and
starts a fresh child. The parent sends heartbeats the whole time, also while a long job runs:
Celery's (for `celery inspect`) and its alive key in Redis (`celery_app.WorkerLiveness`, which
suite runners watch).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from solbench.runner.celery_app import HEARTBEAT_S, BrokerSettings, WorkerLiveness


@dataclass(frozen=True)
class WorkerOptions:
    broker: BrokerSettings
    hardware: str
    """The canonical hardware id this worker measures on (`solbench hw list`); it takes only that hardware's jobs."""
    device: str | None = None
    """``cpu``, ``cuda``, ``cuda:N``; None: the job's own setting (``auto``: cuda when present)."""
    concurrency: int = 1
    name: str | None = None
    heartbeat_s: float = HEARTBEAT_S
    """How often the worker says it is alive; three missed beats and a suite runner sends its jobs elsewhere."""
    loglevel: str = "INFO"
    allow_root_sandbox: bool = False
    """Start even where sandboxes would keep root (confinement.require_unprivileged_sandbox)."""

    @property
    def node_name(self) -> str:
        """Unique per process: two workers on one machine (one per GPU) must not share a Celery node name."""
        if self.name:
            return self.name
        device = (self.device or "auto").replace(":", "")
        return f"solbench-{self.hardware.lower()}-{device}-{os.getpid()}@{socket.gethostname()}"


def start_worker(app, queues: list[str], options: WorkerOptions) -> None:
    """Consume `queues` until stopped (SIGTERM or Ctrl-C: the running job finishes first; a second one cuts it)."""
    from celery.signals import task_received, worker_process_init

    liveness = WorkerLiveness(options.broker.url, options.node_name, options.heartbeat_s)
    task_received.connect(lambda request, **_: liveness.holds(request.id), weak=False)
    worker_process_init.connect(_warm_up, weak=False)
    liveness.start()
    try:
        _consume(app, queues, options)
    finally:
        liveness.stop()


def _consume(app, queues: list[str], options: WorkerOptions) -> None:
    app.worker_main(
        [
            "worker",
            f"--hostname={options.node_name}",
            f"--queues={','.join(queues)}",
            f"--concurrency={options.concurrency}",
            "--pool=prefork",
            f"--loglevel={options.loglevel}",
            f"--heartbeat-interval={max(1, round(options.heartbeat_s))}",
            "--without-mingle",
            "--without-gossip",
        ]
    )


def _warm_up(**_) -> None:
    """In each fresh pool child, before its first job: the imports every evaluation needs (torch takes seconds),
    so the first job of an idle worker is not the slow one."""
    import torch  # noqa: F401 - imported for its start-up cost, paid before the first job

    import solbench.evaluation
    import solbench.sol  # noqa: F401 - the same: imported to be loaded
