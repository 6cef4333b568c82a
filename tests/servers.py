"""Real Redis and PostgreSQL servers on 127.0.0.1 for the service tests, started and stopped by pytest.

No mocks: the distributed tests need the broker's requeue-on-worker-death and the database's unique
constraints as a user meets them. Each server runs from a fresh folder on a free port, for one test
session (per xdist worker), and is stopped at the end. Where the binaries are missing the tests that
need them are skipped with the reason (`.ci/run` installs them with apt).

PostgreSQL's initdb refuses to run as root, so as root the cluster belongs to the `postgres` system
user (made by the Debian package) and its commands run through `runuser`.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

POSTGRES_BIN_DIRS = [Path(f"/usr/lib/postgresql/{v}/bin") for v in (17, 16, 15, 14)] + [Path("/usr/local/bin")]
START_TIMEOUT_S = 30.0
POSTGRES_SUPERUSER = "solbench"


def free_port() -> int:
    """A TCP port nothing listens on now (the kernel's pick); the server binds it right after."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen | None, what: str, timeout_s: float = START_TIMEOUT_S) -> None:
    """Until something accepts connections on 127.0.0.1:port; fails the test when `process` exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode} before listening on port {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout_s:.0f} s")


# ---------------------------------------------------------------------------------------------------- Redis


@dataclass(frozen=True)
class RedisServer:
    port: int
    process: subprocess.Popen

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


def start_redis(folder: Path) -> RedisServer:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    log = open(folder / "redis.log", "wb")
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
            "--protected-mode",
            "yes",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, process, "redis-server")
    except RuntimeError:
        stop_process(process)
        raise
    return RedisServer(port, process)


def stop_process(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> Iterator[RedisServer]:
    """A redis-server on a free port of 127.0.0.1, no persistence, for this test session."""
    if not (shutil.which("redis-server") or Path("/usr/bin/redis-server").exists()):
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server
    stop_process(server.process)


# ----------------------------------------------------------------------------------------------- PostgreSQL


def postgres_bin() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None when PostgreSQL is not installed."""
    for folder in POSTGRES_BIN_DIRS:
        if all((folder / tool).exists() for tool in ("initdb", "pg_ctl", "postgres")):
            return folder
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found and shutil.which("pg_ctl") else None


@dataclass(frozen=True)
class PostgresServer:
    port: int
    data_dir: Path
    bin_dir: Path
    run_as: str | None
    """The system user owning the cluster when the tests run as root; None: the current user."""

    def url(self, database: str = "postgres", driver: str = "postgresql+psycopg") -> str:
        return f"{driver}://{POSTGRES_SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, prefix: str = "test") -> str:
        """A new, empty database; its SQLAlchemy URL. Each test gets its own so none sees another's rows."""
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(driver="postgresql"), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _as_user(command: list[str], user: str | None) -> list[str]:
    return ["runuser", "-u", user, "--", *command] if user else command


def _cluster_owner() -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres").pw_name
    except KeyError:
        pytest.skip("running as root and there is no `postgres` user to own a PostgreSQL cluster (initdb refuses root)")


def start_postgres(bin_dir: Path) -> PostgresServer:
    owner = _cluster_owner()
    # Not under pytest's tmp folder: that one is private to root, and the cluster's owner must reach it.
    folder = Path(tempfile.mkdtemp(prefix="solbench-pg-"))
    if owner:
        record = pwd.getpwnam(owner)
        os.chown(folder, record.pw_uid, record.pw_gid)
    data_dir, port = folder / "data", free_port()
    subprocess.run(
        _as_user(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data_dir),
                "-U",
                POSTGRES_SUPERUSER,
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
            owner,
        ),
        check=True,
        capture_output=True,
    )
    # Durability off: a test database is thrown away, and fsync on every commit only slows the tests.
    options = (
        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
        f"-c full_page_writes=off -c max_connections=200"
    )
    started = subprocess.run(
        _as_user(
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data_dir),
                "-o",
                options,
                "-l",
                str(folder / "postgres.log"),
                "-w",
                "-t",
                str(int(START_TIMEOUT_S)),
                "start",
            ],
            owner,
        ),
        capture_output=True,
        text=True,
    )
    if started.returncode != 0:
        log = (folder / "postgres.log").read_text() if (folder / "postgres.log").exists() else ""
        raise RuntimeError(f"pg_ctl start failed: {started.stderr or started.stdout}\n{log[-2000:]}")
    wait_for_port(port, None, "postgres")
    return PostgresServer(port, data_dir, bin_dir, owner)


def stop_postgres(server: PostgresServer) -> None:
    subprocess.run(
        _as_user(
            [str(server.bin_dir / "pg_ctl"), "-D", str(server.data_dir), "-m", "immediate", "-w", "stop"], server.run_as
        ),
        capture_output=True,
    )
    shutil.rmtree(server.data_dir.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL cluster on a free port of 127.0.0.1 (trust auth, durability off) for this test session."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL (initdb, pg_ctl) is not installed (apt-get install postgresql; .ci/run does)")
    try:
        import psycopg  # noqa: F401 - imported only to see whether it is installed
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[service]')")
    server = start_postgres(bin_dir)
    yield server
    stop_postgres(server)


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """The SQLAlchemy URL of a fresh database of its own for this test."""
    return postgres_server.create_database()


# ------------------------------------------------------------------------------------- solbench processes


class SolbenchProcess:
    """A long-running `solbench …` process (a worker, a server) with its output in a log file.

    It runs in a session of its own, so `kill` can end it with its children (a Celery worker's pool
    child and sandboxes): what a machine that dies does to its jobs.
    """

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None = None, cwd: Path | None = None):
        import sys

        self.log = log
        self._log_file = open(log, "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "solbench", *map(str, args)],
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for_output(self, text: str, timeout_s: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if text in self.output():
                return
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.log.name}: exited with {self.process.returncode} before printing "
                    f"{text!r}:\n{self.output()[-3000:]}"
                )
            time.sleep(0.1)
        raise RuntimeError(f"{self.log.name}: no {text!r} within {timeout_s:.0f} s:\n{self.output()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL to the whole process group at once: nothing gets to clean up or hand its job back."""
        import signal

        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()

    def stop(self, grace_s: float = 15.0) -> None:
        """SIGTERM (a warm shutdown), then SIGKILL to what is left of its group."""
        import signal

        if self.process.poll() is None:  # to the main process only: it stops its children in order
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        self._log_file.close()


def start_worker(
    broker_url: str, log: Path, *args: str, env: dict[str, str] | None = None, wait: bool = True
) -> SolbenchProcess:
    """A `solbench worker` on this broker, ready to take jobs (with `wait=False`: starting; see `wait_until_ready`)."""
    # as root with a Python other users cannot reach (CI), workers refuse root sandboxes unless told (docs/sandbox.md)
    worker = SolbenchProcess(["worker", "--broker", broker_url, "--allow-root-sandbox", *args], log, env)
    if wait:
        wait_until_ready(worker)
    return worker


def wait_until_ready(worker: SolbenchProcess) -> None:
    try:
        worker.wait_for_output(" ready.", timeout_s=60)
    except RuntimeError:
        worker.stop()
        raise
