"""`solbench worker`: a Celery worker that evaluates the jobs of one hardware id on one device."""

from __future__ import annotations

from pathlib import Path

import typer

from solbench.cli.common import UsageError


def run_worker(
    broker: str = typer.Option("redis://127.0.0.1:6379/0", "--broker", help="Redis URL of the Celery broker."),
    db: str | None = typer.Option(
        None,
        "--db",
        help="The service's database URL for submissions (default: the one the server "
        "sends, unless it holds a password).",
    ),
    data: Path | None = typer.Option(
        None,
        "--data",
        help="Folder of the result cache for submissions (default: the server's "
        "--data folder, shared when on the same machine).",
    ),
    hardware: str | None = typer.Option(
        None,
        "--hardware",
        "-H",
        help="Hardware id of this machine (`solbench hw list`; default `local`, "
        "this CPU): the worker takes only its jobs.",
    ),
    device: str | None = typer.Option(
        None, "--device", help="cpu, cuda or cuda:N (default: the job's setting; cuda when present)."
    ),
    concurrency: int = typer.Option(
        1, "--concurrency", min=1, help="Jobs at once; keep 1 per device, so timings do not share it."
    ),
    name: str | None = typer.Option(None, "--name", help="Celery node name (default: hardware, device, pid, host)."),
    heartbeat: float = typer.Option(
        10.0,
        "--heartbeat",
        min=0.5,
        help="Seconds between heartbeats; a suite-run job whose worker missed three is sent to another.",
    ),
    visibility_timeout: float = typer.Option(
        3600.0,
        "--visibility-timeout",
        min=1,
        help="Seconds after which a job unacknowledged by a dead worker goes to another; longer than any one job.",
    ),
    allow_root_sandbox: bool = typer.Option(
        False,
        "--allow-root-sandbox",
        help="Start even where sandboxes would keep root (the interpreter is where "
        "nobody can reach it): see docs/service-workers.md.",
    ),
) -> None:
    """Evaluate jobs sent over a Celery broker, one at a time per device, each in its own sandbox: suite runs
    (`solbench run --broker`) and leaderboard submissions (`solbench serve --broker`) of this hardware."""
    from solbench.evaluation import EvaluationConfig
    from solbench.evaluation.config import HarnessOptionError, check_harness_options
    from solbench.runner.celery_app import BrokerSettings, canonical_hardware
    from solbench.runner.celery_worker import WorkerOptions
    from solbench.service.celery_queue import run_worker as serve_jobs

    if not broker.startswith(("redis://", "rediss://")):
        raise UsageError(f"--broker {broker}: expected a Redis URL (redis://host:6379/0)")
    if device is not None:
        try:
            check_harness_options(EvaluationConfig(device=device))
        except HarnessOptionError as error:
            raise UsageError(f"--device {device}: {error}") from None
    options = WorkerOptions(
        broker=BrokerSettings(broker, visibility_timeout_s=visibility_timeout),
        hardware=canonical_hardware(hardware or "local"),
        device=device,
        concurrency=concurrency,
        name=name,
        heartbeat_s=heartbeat,
        allow_root_sandbox=allow_root_sandbox,
    )
    from rich.console import Console

    from solbench.evaluation.confinement import describe_sandboxes, require_unprivileged_sandbox

    require_unprivileged_sandbox(allow_root_sandbox)  # refused in one line, before anything is printed
    Console(stderr=True).print(f"sandboxes     {describe_sandboxes()}", highlight=False, markup=False)
    serve_jobs(options, database_url=db, data_dir=data)
