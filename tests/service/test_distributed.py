"""200 concurrent submissions over HTTP while a worker is killed: every one ends with exactly one result.

Two set-ups, each with real processes end to end:

- PostgreSQL and Redis on 127.0.0.1, `solbench serve --db postgresql+psycopg://… --broker redis://…`
  and two `solbench worker` processes; one worker (its whole process group) gets SIGKILL while it
  evaluates;
- SQLite with the server's two embedded workers (`solbench serve --workers 2`); one worker process
  gets SIGKILL while it evaluates.

The evaluations are kept cheap: a vector add with one small workload and a handful of distinct
solutions, so most of the 200 submissions reuse a cached result. An honest but slow solution,
queued last, makes sure a real evaluation is running when the worker dies.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path

import pytest

from conftest import VECTOR_ADD, solution_dict, vector_workloads, write_problem
from servers import (  # noqa: F401 - fixtures, used as test parameters
    SolbenchProcess,
    free_port,
    postgres_server,
    postgres_url,
    redis_server,
    start_worker,
    wait_for_port,
    wait_until_ready,
)

pytestmark = pytest.mark.slow

SUBMISSIONS = 200
FINISH_TIMEOUT_S = 150.0
SLOW_SECONDS = 0.1
"""How long each call of the slow solution takes (a busy loop, not a sleep: it computes honestly, slowly)."""
QUICK_SOURCES = [
    "import torch\n\ndef run(x, y):\n    return x + y\n",
    "import torch\n\ndef run(x, y):\n    return x - y\n",  # wrong: a failure is a result too, never retried
]


def slow_source(tag: str) -> str:
    return (
        f"import time\nimport torch\n\n# {tag}\ndef run(x, y):\n    end = time.perf_counter() + {SLOW_SECONDS}\n"
        f"    while time.perf_counter() < end:\n        pass\n    return x + y\n"
    )


def service_settings(tmp_path: Path, **extra) -> Path:
    """Cheap evaluations, no rate limits in the way of 200 submissions, fast failure detection."""
    settings = {
        "evaluation": {
            "device": "cpu",
            "rounds": 1,
            "budget_s": 0.01,
            "warmup_s": 0.0,
            "min_warmup": 1,
            "min_iterations": 2,
            "timeout_s": 60,
            "time_reference": False,
            "memory_limit_gb": 4,
        },
        "limits": {
            "per_hour": {"test": 10000, "private": 10000, "ranked": 10000},
            "per_day": {"test": 10000, "private": 10000, "ranked": 10000},
            "max_queued": 10000,
        },
        "held_out_per_problem": 0,
        "heartbeat_s": 1.0,
        "stale_after_s": 4.0,
        "max_attempts": 3,
        "poll_s": 0.2,
        "allow_root_sandbox": True,  # as root with a Python nobody can reach (CI): see docs/sandbox.md
        **extra,
    }
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    return path


def tiny_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    write_problem(suite / "L1" / "vector_add", {**VECTOR_ADD, "tags": ["set:L1"]}, vector_workloads(1000))
    return suite


def submissions() -> list[dict]:
    """199 drawn from the quick solutions, then the slow one, queued last: the workers share most of the
    work, and a real evaluation is still running when one of them is killed."""
    quick = [solution_dict(source, name=f"quick-{i}") for i, source in enumerate(QUICK_SOURCES)]
    return [quick[i % len(quick)] for i in range(SUBMISSIONS - 1)] + [solution_dict(slow_source("x"), name="slow")]


async def post_all(port: int, token: str, bodies: list[dict]) -> list[int]:
    """All bodies but the last at once (up to 50 connections in flight), then the last (so it is queued last);
    the submission ids, in order."""
    import httpx

    limits = httpx.Limits(max_connections=50)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}/api/v1",
        timeout=60,
        limits=limits,
        headers={"Authorization": f"Bearer {token}"},
    ) as client:

        async def post(index: int, body: dict):
            """As a careful client: a connection lost before the reply is retried with the same idempotency key,
            so the server stores one submission whether or not the first request reached it."""
            for attempt in range(3):
                try:
                    return await client.post(
                        "/submissions",
                        headers={"Idempotency-Key": f"test-{index}"},
                        json={"problem": "vector_add", "solution": body, "mode": "private"},
                    )
                except httpx.TransportError as error:
                    if attempt == 2:
                        raise
                    print(f"POST {index}: {type(error).__name__}; sent again with its idempotency key")
                    await asyncio.sleep(0.5)

        replies = await asyncio.gather(*[post(i, body) for i, body in enumerate(bodies[:-1])])
        replies.append(await post(len(bodies) - 1, bodies[-1]))
    assert all(r.status_code == 202 for r in replies), [r.text for r in replies if r.status_code != 202][:3]
    ids = [r.json()["id"] for r in replies]
    assert len(set(ids)) == len(bodies)
    return ids


def add_user(db_args: list[str], settings: Path, env: dict) -> str:
    import subprocess
    import sys

    made = subprocess.run(
        [sys.executable, "-m", "solbench", "admin", "add-user", "alice", *db_args, "--settings", str(settings)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    return made.stdout.strip().splitlines()[-1]


def start_server(tmp_path: Path, args: list[str], env: dict) -> tuple[SolbenchProcess, int]:
    port = free_port()
    server = SolbenchProcess(
        ["serve", "--port", port, "--suite", tiny_suite(tmp_path), *args], tmp_path / "serve.log", env, cwd=tmp_path
    )
    try:
        wait_for_port(port, server.process, "solbench serve", timeout_s=90)
    except RuntimeError:
        server.stop()
        raise RuntimeError(server.output()[-3000:]) from None
    return server, port


def wait_for(condition, what: str, timeout_s: float, servers: list[SolbenchProcess]):
    """Poll `condition` until it returns something truthy; fail with every process's log tail when time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    logs = "\n".join(f"--- {s.log.name}\n{s.output()[-2500:]}" for s in servers)
    pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}\n{logs}")


def rows(engine, sql: str) -> list:
    import sqlalchemy

    with engine.connect() as connection:
        return list(connection.execute(sqlalchemy.text(sql)))


def slow_job_running(engine, worker_prefix: str):
    """(submission id, worker name) of a slow solution being evaluated by a worker whose name starts so."""
    found = rows(engine, "SELECT id, worker, solution FROM submissions WHERE status = 'running'")
    for submission_id, worker, solution in found:
        name = (json.loads(solution) if isinstance(solution, str) else solution)["name"]
        if name == "slow" and (worker or "").startswith(worker_prefix):
            return submission_id, worker
    return None


def check_exactly_one_result_each(engine, ids: list[int]) -> dict:
    """Every submission done, with one result row; the schema itself forbids a second one."""
    import sqlalchemy

    statuses = dict(rows(engine, "SELECT status, count(*) FROM submissions GROUP BY status"))
    assert statuses == {"done": len(ids)}, statuses
    per_submission = dict(rows(engine, "SELECT submission_id, count(*) FROM results GROUP BY submission_id"))
    assert sorted(per_submission) == sorted(ids)
    assert set(per_submission.values()) == {1}
    unique = any(
        constraint["column_names"] == ["submission_id"]
        for constraint in sqlalchemy.inspect(engine).get_unique_constraints("results")
    ) or any(
        index["unique"] and index["column_names"] == ["submission_id"]
        for index in sqlalchemy.inspect(engine).get_indexes("results")
    )
    assert unique, "results.submission_id must be unique"
    verdicts = dict(rows(engine, "SELECT verdict, count(*) FROM results GROUP BY verdict"))
    return verdicts


def all_finished(engine, count: int) -> bool:
    return rows(engine, "SELECT count(*) FROM submissions WHERE status IN ('done', 'failed')")[0][0] >= count


def test_postgres_redis_two_celery_workers_one_killed(tmp_path, postgres_url, redis_server, probed_home):
    import sqlalchemy

    settings = service_settings(tmp_path)
    env = probed_home
    token = add_user(["--db", postgres_url], settings, env)
    worker_args = ["--hardware", "local", "--device", "cpu", "--visibility-timeout", "5"]
    workers = {
        name: start_worker(
            redis_server.url, tmp_path / f"{name}.log", *worker_args, "--name", name, env=env, wait=False
        )
        for name in ("one@test", "two@test")
    }  # they start while the server does
    processes = list(workers.values())
    engine = sqlalchemy.create_engine(postgres_url)
    try:
        server, port = start_server(
            tmp_path,
            ["--db", postgres_url, "--broker", redis_server.url, "--settings", settings, "--data", tmp_path / "data"],
            env,
        )
        processes.append(server)
        for worker in workers.values():
            wait_until_ready(worker)
        started = time.monotonic()
        ids = asyncio.run(post_all(port, token, submissions()))
        posted = time.monotonic()
        victim, killed = wait_for(lambda: slow_job_running(engine, ""), "a slow job running", 60, processes)
        workers[killed].kill()
        wait_for(lambda: all_finished(engine, len(ids)), "every submission to finish", FINISH_TIMEOUT_S, processes)
        print(f"posted in {posted - started:.1f} s, all done {time.monotonic() - started:.1f} s after the first post")
        verdicts = check_exactly_one_result_each(engine, ids)
        rerun = rows(
            engine,
            f"SELECT s.attempts, r.worker FROM submissions s JOIN results r "
            f"ON r.submission_id = s.id WHERE s.id = {victim}",
        )
        hardware = {h for (h,) in rows(engine, "SELECT DISTINCT hardware FROM results")}
        clocks = [clock for (clock,) in rows(engine, "SELECT clock FROM results")]
    finally:
        for process in processes:
            process.stop()
        engine.dispose()
    survivor = next(name for name in workers if name != killed)
    assert rerun[0][1] == survivor and rerun[0][0] >= 2  # the killed worker's job ran again, on the other worker
    assert hardware == {"local"}  # the worker's hardware id and clock state, on every result
    assert all("state" in (json.loads(c) if isinstance(c, str) else c) for c in clocks)
    assert sum(verdicts.values()) == SUBMISSIONS and len(verdicts) >= 2  # the wrong solution fails, as a result


def test_sqlite_two_embedded_workers_one_killed(tmp_path, probed_home):
    import sqlalchemy

    # A heartbeat deadline far beyond the test: the killed worker's job must go back at once, because its death is
    # seen, not because its heartbeat stopped.
    settings = service_settings(tmp_path, workers=2, stale_after_s=600.0)
    data = tmp_path / "data"
    env = probed_home
    token = add_user(["--data", str(data)], settings, env)
    server, port = start_server(tmp_path, ["--settings", settings, "--data", data], env)
    engine = sqlalchemy.create_engine(f"sqlite:///{data / 'solbench.db'}")
    started = time.monotonic()
    try:
        ids = asyncio.run(post_all(port, token, submissions()))
        posted = time.monotonic()
        victim, worker = wait_for(lambda: slow_job_running(engine, ""), "a slow job running", 60, [server])
        pid = int(worker.split("-embedded-")[0].rsplit("-", 1)[1])  # names are <host>-<pid>-embedded-<n>
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        wait_for(
            lambda: rows(
                engine,
                f"SELECT 1 FROM submissions WHERE id = {victim} AND (status != 'running' OR worker != '{worker}')",
            ),
            "the dead worker's job back in the queue",
            10,
            [server],
        )
        print(f"the killed worker's job was queued again {time.monotonic() - killed:.1f} s after the kill")
        wait_for(lambda: all_finished(engine, len(ids)), "every submission to finish", FINISH_TIMEOUT_S, [server])
        print(f"posted in {posted - started:.1f} s, all done {time.monotonic() - started:.1f} s after the first post")
        check_exactly_one_result_each(engine, ids)
        rerun = rows(
            engine,
            f"SELECT s.attempts, r.worker FROM submissions s JOIN results r "
            f"ON r.submission_id = s.id WHERE s.id = {victim}",
        )
    finally:
        server.stop()
        engine.dispose()
    assert rerun[0][0] >= 2 and rerun[0][1] != worker
