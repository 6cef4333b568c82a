"""`solbench serve`: the leaderboard service (API, and the job queue: embedded workers or a Celery broker)."""

from __future__ import annotations

from pathlib import Path

import typer


def serve(
    ctx: typer.Context,
    db: str = typer.Option(None, "--db", help="Database URL (postgresql+psycopg://...); default SQLite in --data."),
    suite: list[Path] = typer.Option(
        None, "--suite", help="Suite folder to serve (repeatable); default ./problems and ./examples."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    workers: int = typer.Option(1, "--workers", min=0, help="Embedded evaluation worker processes."),
    broker: str = typer.Option(None, "--broker", help="Celery broker URL (redis://...): remote workers instead."),
    data: Path = typer.Option(
        None, "--data", help="Data folder: SQLite database, result cache, secret (default ./solbench-data)."
    ),
    hardware: str = typer.Option(None, "--hardware", help="Hardware id scores use (default local: this CPU)."),
    baselines: list[Path] = typer.Option(
        None, "--baselines", help="Baselines file with T_b (repeatable); default ./baselines/*.json."
    ),
    allow_root_sandbox: bool = typer.Option(
        False,
        "--allow-root-sandbox",
        help="Run embedded workers even where their sandboxes would keep root "
        "(the interpreter is where nobody can reach it): see "
        "docs/service-workers.md.",
    ),
    settings_file: Path = typer.Option(
        None, "--settings", help="ServiceSettings as JSON (docs/service.md); flags override it."
    ),
) -> None:
    """Run the leaderboard service. With no flags it is embedded: a SQLite file in ./solbench-data, the suite in
    ./problems imported with versions, and local evaluation workers. Prints what it uses, then serves
    /api/v1 (OpenAPI at /api/v1/docs) until Ctrl-C."""
    import uvicorn
    from rich.console import Console

    from solbench.cli.common import ensure_local_probe
    from solbench.cli.service_options import service_settings
    from solbench.service.app import check_sandbox_user, create_app, prepare

    console = Console(stderr=True)
    # --workers has run's default (1); only a --workers typed here overrides a settings file's value.
    # (The source is compared by name: Typer may vendor its own Click.)
    typed_workers: int | None = workers
    if getattr(ctx.get_parameter_source("workers"), "name", "") != "COMMANDLINE":
        typed_workers = None
    settings = service_settings(
        settings_file,
        db_url=db,
        suites=tuple(suite or ()),
        workers=typed_workers,
        broker_url=broker,
        data_dir=data,
        hardware=hardware,
        baselines=tuple(baselines or ()),
        allow_root_sandbox=True if allow_root_sandbox else None,
    )
    check_sandbox_user(settings)  # before probing this CPU, which takes half a minute
    ensure_local_probe(settings.hardware, console)
    from solbench.hardware import lookup

    lookup(settings.hardware)  # an unknown hardware id fails here, before anything is served
    service = prepare(settings)
    if settings.broker_url:  # an unreachable broker is one line and exit 2, not a failed startup's traceback
        from solbench.runner.celery_app import BrokerSettings
        from solbench.runner.celery_pool import check_reachable

        check_reachable(BrokerSettings(settings.broker_url))
    queue = (
        f"Celery broker {_without_password(settings.broker_url)}"
        if settings.broker_url
        else f"{settings.workers} embedded worker process(es)"
    )
    for line in (
        f"data folder   {settings.data_dir.resolve()}",
        f"database      {service.engine.url.render_as_string(hide_password=True)}",
        f"problems      {service.imported.problems} from {', '.join(service.imported.suites) or 'no suite'}"
        f" ({service.imported.new_versions} new version(s))",
        f"baselines     {service.baselines} T_b entries",
        f"hardware      {settings.hardware} on device {settings.evaluation.device}",
        f"workers       {queue}",
        f"sandboxes     {_sandboxes(settings)}",
        f"serving       http://{host}:{port}/api/v1 (docs: /api/v1/docs)",
    ):
        console.print(line, highlight=False, markup=False)
    uvicorn.run(create_app(service), host=host, port=port, log_level="warning")


def _sandboxes(settings) -> str:
    if settings.broker_url:
        return "each worker's own (`solbench worker` prints it; every trace names it)"
    from solbench.evaluation.confinement import describe_sandboxes

    return describe_sandboxes()


def _without_password(url: str) -> str:
    """`redis://:secret@host/0` -> `redis://:***@host/0`, for printing."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url
