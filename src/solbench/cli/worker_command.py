"""`solbench worker`: a Celery worker that evaluates the jobs of one hardware id on one device."""

from __future__ import annotations

from typing import Optional

import typer

from solbench.cli.common import UsageError


def run_worker(
    broker: str = typer.Option("redis://127.0.0.1:6379/0", "--broker", help="Redis URL of the Celery broker."),
    db: Optional[str] = typer.Option(None, "--db",
                                     help="The service's database URL (postgresql+psycopg://…): also evaluate "
                                          "leaderboard submissions. Without it, only `solbench run --broker` jobs."),
    hardware: str = typer.Option("local", "--hardware", "-H",
                                 help="Hardware id of this machine (`solbench hw list`): the worker takes only its jobs."),
    device: Optional[str] = typer.Option(None, "--device",
                                         help="cpu, cuda or cuda:N (default: the job's setting; cuda when present)."),
    concurrency: int = typer.Option(1, "--concurrency", "-c", min=1,
                                    help="Jobs at once; keep 1 per device, so timings do not share it."),
    name: Optional[str] = typer.Option(None, "--name", help="Celery node name (default: hardware, device, pid, host)."),
    visibility_timeout: float = typer.Option(3600.0, "--visibility-timeout", min=1,
                                             help="Seconds after which a job unacknowledged by a dead worker goes to "
                                                  "another; longer than any one job."),
    max_attempts: int = typer.Option(3, "--max-attempts", min=1,
                                     help="Tries of a submission whose evaluation failed outside the solution."),
) -> None:
    """Evaluate jobs sent over a Celery broker: suite runs (`solbench run --broker`) and, with --db, leaderboard
    submissions (`solbench serve --broker`), one at a time per device, each in its own sandbox."""
    from solbench.evaluate.config import HarnessOptionError, check_harness_options
    from solbench.evaluate import EvaluationConfig
    from solbench.hardware import lookup
    from solbench.runner.celery_app import BrokerSettings
    from solbench.runner.celery_worker import WorkerOptions
    from solbench.service.celery_queue import run_worker as serve_jobs

    if not broker.startswith(("redis://", "rediss://")):
        raise UsageError(f"--broker {broker}: expected a Redis URL (redis://host:6379/0)")
    if device is not None:
        try:
            check_harness_options(EvaluationConfig(device=device))
        except HarnessOptionError as error:
            raise UsageError(f"--device {device}: {error}") from None
    options = WorkerOptions(broker=BrokerSettings(broker, visibility_timeout_s=visibility_timeout),
                            hardware=lookup(hardware).id, device=device, concurrency=concurrency, name=name)
    serve_jobs(options, database_url=db, max_attempts=max_attempts)
