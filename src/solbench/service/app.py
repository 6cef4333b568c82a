"""The server: preparing a service (database migrated, suites and baselines imported) and the FastAPI app.

`solbench serve` calls `prepare` (and prints what it uses), then runs `create_app` with uvicorn; the
app starts the job queue when it starts and closes it when it stops. Routers read the service from
`request.app.state.service`. The web pages (solbench.service.web, when present) are mounted too.
"""

from __future__ import annotations

import importlib
import importlib.util
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from solbench.service.catalog import CatalogImport, import_baselines, import_suites
from solbench.service.db import open_database
from solbench.service.jobs import JobQueue
from solbench.service.limits import WaitingRequests
from solbench.service.queues import make_queue
from solbench.service.settings import ServiceSettings

API_PREFIX = "/api/v1"
WEB_MODULE = "solbench.service.web"


@dataclass
class Service:
    settings: ServiceSettings
    engine: Engine
    session_factory: sessionmaker[Session]
    imported: CatalogImport
    baselines: int
    queue: JobQueue | None = field(default=None)
    waiting: WaitingRequests = field(init=False)
    """The requests waiting for env calls' answers in this process, per user (`limits.max_waiting_env_requests`)."""

    def __post_init__(self) -> None:
        self.waiting = WaitingRequests(self.settings.limits.max_waiting_env_requests)


def prepare(settings: ServiceSettings) -> Service:
    """Open (and migrate) the database, import the suites (a changed problem becomes a new version) and the
    baselines files. Raises SolbenchError for a bad suite folder, baselines file or database URL, and for embedded
    workers whose sandboxes would keep root without `allow_root_sandbox`."""
    check_sandbox_user(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine, session_factory = open_database(settings.database_url)
    imported = import_suites(
        session_factory, settings.suite_folders(), settings.secret(), settings.held_out_per_problem
    )
    baselines = import_baselines(session_factory, settings.baseline_files())
    return Service(
        settings=settings, engine=engine, session_factory=session_factory, imported=imported, baselines=baselines
    )


def check_sandbox_user(settings: ServiceSettings) -> None:
    """Embedded workers run sandboxes on this machine: refuse ones that would keep root unless the settings allow
    it (RootSandboxRefused). Cheap, so `solbench serve` asks before anything slow."""
    if settings.workers > 0 and not settings.broker_url:
        from solbench.evaluation.confinement import require_unprivileged_sandbox

        require_unprivileged_sandbox(settings.allow_root_sandbox)


def create_app(service: Service, *, start_queue: bool = True) -> FastAPI:
    """The FastAPI app of `service`: /api/v1 (OpenAPI at /api/v1/openapi.json, docs at /api/v1/docs)."""
    from solbench.service.api import router
    from solbench.service.api.body_limit import BodyLimit
    from solbench.service.door import Refused

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if start_queue:
            service.queue = make_queue(service.settings, service.session_factory)
        try:
            yield
        finally:
            if service.queue is not None:
                service.queue.close()
                service.queue = None

    app = FastAPI(
        title="solbench leaderboard",
        version=_version(),
        lifespan=lifespan,
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,
        redoc_url=None,
    )  # docs: reference_page
    app.state.service = service
    app.add_middleware(BodyLimit, max_bytes=service.settings.limits.max_body_bytes)
    app.include_router(router, prefix=API_PREFIX)

    @app.exception_handler(Refused)
    async def _refused(_request: Request, error: Refused):
        return JSONResponse({"detail": str(error), "field": error.field}, status_code=error.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, error: RequestValidationError):
        first = error.errors()[0]
        location = [str(p) for p in first.get("loc", ()) if p != "body"]
        field_name = ".".join(location) or "body"
        return JSONResponse(
            {"detail": f"{field_name}: {first.get('msg', 'invalid')}", "field": field_name}, status_code=422
        )

    if importlib.util.find_spec(WEB_MODULE) is not None:
        web = importlib.import_module(WEB_MODULE)
        app.include_router(web.router)
    return app


def _version() -> str:
    from solbench.version import __version__

    return __version__
