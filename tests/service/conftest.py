"""Fixtures of the service tests: a tiny suite, fast settings, a migrated database, a real server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import VECTOR_ADD, solution_dict, vector_workloads, write_problem

HARDWARE = "H100_SXM"
"""A hardware id from the database: T_SOL needs no probe of this CPU."""
ADD = "import torch\n\ndef run(x, y):\n    return x + y\n"


def fast_settings(root: Path, **overrides) -> dict:
    """ServiceSettings (as JSON data) that evaluate in about a second per workload on a CPU."""
    suite = root / "suite"
    if not suite.exists():
        write_problem(suite / "L1" / "vector_add", VECTOR_ADD, vector_workloads(1000, 4099))
    settings = {
        "data_dir": str(root / "data"),
        "suites": [str(suite)],
        "hardware": HARDWARE,
        "workers": 1,
        "held_out_per_problem": 1,
        "heartbeat_s": 1.0,
        "allow_root_sandbox": True,  # as root with a Python nobody can reach (CI): see docs/sandbox.md
        "stale_after_s": 30.0,
        "poll_s": 0.1,
        "evaluation": {
            "device": "cpu",
            "rounds": 1,
            "budget_s": 0.02,
            "warmup_s": 0.0,
            "min_warmup": 1,
            "min_iterations": 3,
            "timeout_s": 60,
            "memory_limit_gb": 4,
        },
    }
    settings.update(overrides)
    return settings


def settings_model(data: dict):
    from solbench.service.settings import ServiceSettings

    return ServiceSettings.model_validate(data)


def add_solution(source: str = ADD, **options) -> dict:
    return solution_dict(source, **options)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ThreadServer:
    """uvicorn serving an ASGI app on a free port of 127.0.0.1 from a thread of this process (as `solbench serve`
    runs it: uvicorn's defaults); a context manager that stops it."""

    def __init__(self, app):
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on port {self.port}")
            time.sleep(0.01)
        return self

    def __exit__(self, *_) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


class LiveServer:
    """`solbench serve` in a subprocess on a free port of 127.0.0.1, with its settings and an admin token."""

    def __init__(self, root: Path, settings: dict, cache: Path):
        self.root = root
        self.settings = settings
        self.settings_file = root / "settings.json"
        self.settings_file.write_text(json.dumps(settings))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "SOLBENCH_CACHE_DIR": str(cache)}
        self.log = open(root / "serve.log", "w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "solbench",
                "serve",
                "--settings",
                str(self.settings_file),
                "--port",
                str(self.port),
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=self.env,
            cwd=root,
        )
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"solbench serve exited: {(self.root / 'serve.log').read_text()}")
            try:
                if httpx.get(self.url + "/api/v1/status", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("solbench serve did not answer within 60 s")

    def cli(self, *args: str, **options) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "solbench", *args],
            capture_output=True,
            text=True,
            env={**self.env, **options.pop("env", {})},
            cwd=self.root,
            timeout=180,
            **options,
        )

    def add_user(self, name: str, admin: bool = False) -> str:
        """A user and its token, written straight into the server's database (the CLI is tested once)."""
        from solbench.service.auth import add_user

        return add_user(self.session_factory(), name, admin=admin).token

    def client(self, token: str | None = None):
        import httpx

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url + "/api/v1", headers=headers, timeout=30)

    def session_factory(self):
        from solbench.service.db import open_database

        return open_database(settings_model(self.settings).database_url, migrate=False)[1]

    def wait_done(self, token: str, submission_id: int, timeout_s: float = 120) -> dict:
        deadline = time.monotonic() + timeout_s
        with self.client(token) as client:
            while time.monotonic() < deadline:
                view = client.get(f"/submissions/{submission_id}").json()
                if view["status"] in ("done", "failed"):
                    return view
                time.sleep(0.2)
        raise AssertionError(f"submission {submission_id} still {view['status']} after {timeout_s} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()


@pytest.fixture(scope="module")
def live_server(tmp_path_factory):
    """One server per test module (starting one costs seconds); tests make their own users."""
    root = tmp_path_factory.mktemp("service")
    cache = tmp_path_factory.mktemp("service-cache")
    limits = {
        "max_body_bytes": 64 * 1024,
        "per_hour": {"test": 3, "private": 50, "ranked": 50},
        "per_day": {"test": 100, "private": 100, "ranked": 100},
        "max_queued": 20,
    }
    server = LiveServer(root, fast_settings(root, limits=limits), cache)
    yield server
    server.stop()


@pytest.fixture
def database(tmp_path):
    """A migrated SQLite database in tmp_path: its session factory."""
    from solbench.service.db import open_database

    return open_database(f"sqlite:///{tmp_path / 'test.db'}")[1]


class InProcessService:
    """The real app in this process (FastAPI's TestClient), over a migrated SQLite database filled with the page
    screenshots' sample: users with tokens (sample.tokens), an admin, submissions in an open and a frozen set.
    `overrides` replace ServiceSettings fields (tight `limits`, for one)."""

    def __init__(self, root: Path, **overrides):
        from fastapi.testclient import TestClient

        from solbench.service.app import create_app, prepare
        from solbench.service.auth import add_user
        from solbench.service.settings import ServiceSettings
        from solbench.service.web.sample_data import HARDWARE, build_sample

        self.sample = build_sample(root / "data", submissions=30, users=6)
        settings = ServiceSettings(
            data_dir=root / "data", suites=(self.sample.suite_dir,), hardware=HARDWARE, workers=0, **overrides
        )
        self.service = prepare(settings)
        self.admin = add_user(self.service.session_factory, "root", admin=True).token
        self.client = TestClient(create_app(self.service, start_queue=False))

    def get(self, path: str, token: str | None = None, **options):
        return self.client.get(path, headers={"Authorization": f"Bearer {token}"} if token else {}, **options)

    def close(self) -> None:
        self.client.close()
        self.service.engine.dispose()


@pytest.fixture(scope="module")
def in_process_service(tmp_path_factory):
    """One InProcessService per test module: fast (no server process, no queue), for the fast tier."""
    app = InProcessService(tmp_path_factory.mktemp("in_process"))
    with app.client:
        yield app
    app.close()
