"""Leaderboard service throughput: submissions accepted per second, and the server's cost per evaluation.

Starts real servers on 127.0.0.1 (as the tests do: tests/servers.py) and prints, in one run:

1. Submissions accepted per second: N concurrent HTTP clients POST /api/v1/submissions (each a
   valid solution that passes the door's checks) to `solbench serve` with
   - SQLite, no workers (`--workers 0`: acceptance alone, nothing evaluating beside it);
   - PostgreSQL + Redis (`--db postgresql+psycopg://… --broker redis://…`, each accepted
     submission also sent to the broker), where initdb and redis-server are installed.
2. Overhead per evaluation: the same new solution (never seen, so really evaluated)
   - evaluated by a bare `solbench eval --hardware local` (a fresh process, as a user runs it);
   - submitted to `solbench serve --workers 1` (SQLite, a warm embedded worker) and polled until
     its result is stored: submit-to-result latency;
   - submitted again (a cached result reused): the server's cost when nothing is measured.
   Each is the median of `--repeats` runs, with the same evaluation settings on both sides.

Usage: python benchmarks/service_throughput.py [--clients 1 8 32] [--submissions 300] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from servers import (  # noqa: E402 - after the sys.path entry above
    SolbenchProcess,
    free_port,
    postgres_bin,
    start_postgres,
    start_redis,
    stop_postgres,
    stop_process,
    wait_for_port,
)

PROBLEM = {
    "name": "vector_add",
    "axes": {"N": {"type": "var"}},
    "inputs": {"x": {"shape": ["N"], "dtype": "float32"}, "y": {"shape": ["N"], "dtype": "float32"}},
    "outputs": {"z": {"shape": ["N"], "dtype": "float32"}},
    "reference": "import torch\n\ndef run(x, y):\n    return x + y\n",
    "tags": ["set:L1"],
}
ROUNDS, BUDGET_S = 1, 0.05
EVALUATION = {"device": "cpu", "rounds": ROUNDS, "budget_s": BUDGET_S}
"""The service's evaluation settings; `solbench eval --rounds 1 --budget 0.05 --device cpu` matches them."""


def solution(tag: str) -> dict:
    source = f"import torch\n\n# {tag}\ndef run(x, y):\n    return x + y\n"
    return {
        "name": f"add-{tag}",
        "definition": "vector_add",
        "author": "benchmark",
        "spec": {
            "languages": ["pytorch"],
            "target_hardware": ["LOCAL"],
            "entry_point": "kernel.py::run",
            "destination_passing_style": False,
        },
        "sources": [{"path": "kernel.py", "content": source}],
    }


def prepare(folder: Path) -> tuple[Path, Path]:
    """The suite (one problem, two workloads) and the service settings (no rate limits in the way)."""
    problem = folder / "suite" / "L1" / "vector_add"
    problem.mkdir(parents=True)
    (problem / "definition.json").write_text(json.dumps(PROBLEM))
    (problem / "workload.jsonl").write_text(
        "".join(
            json.dumps(
                {"uuid": f"n{n}", "axes": {"N": n}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}}
            )
            + "\n"
            for n in (4096, 65536)
        )
    )
    many = {"test": 10**6, "private": 10**6, "ranked": 10**6}
    settings = folder / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "evaluation": EVALUATION,
                "held_out_per_problem": 0,
                "poll_s": 0.05,
                "limits": {"per_hour": many, "per_day": many, "max_queued": 10**6},
            }
        )
    )
    return folder / "suite", settings


def solbench(*args, env: dict) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)], capture_output=True, text=True, env=env, timeout=600
    )
    if done.returncode != 0:
        raise SystemExit(f"solbench {' '.join(map(str, args))} failed:\n{done.stderr[-2000:]}")
    return done.stdout


class Service:
    """`solbench serve` with a user, on a free port; stopped by `close`."""

    def __init__(self, folder: Path, suite: Path, settings: Path, env: dict, *args: str):
        folder.mkdir(parents=True, exist_ok=True)
        database = [a for pair in zip(args[::2], args[1::2]) if pair[0] in ("--db", "--data") for a in pair]
        self.token = (
            solbench("admin", "add-user", "bench", *database, "--settings", settings, env=env).strip().splitlines()[-1]
        )
        self.port = free_port()
        self.process = SolbenchProcess(
            ["serve", "--port", self.port, "--suite", suite, "--settings", settings, "--allow-root-sandbox", *args],
            folder / "serve.log",
            env,
            cwd=folder,
        )
        wait_for_port(self.port, self.process.process, "solbench serve", timeout_s=120)
        self.url = f"http://127.0.0.1:{self.port}/api/v1"

    def close(self) -> None:
        self.process.stop()


async def accept_rate(service: Service, clients: int, total: int, tag: str) -> float:
    """Submissions accepted per second with `clients` requests in flight at once."""
    import httpx

    bodies = [
        {"problem": "vector_add", "solution": solution(f"{tag}-{i % 20}"), "mode": "private"} for i in range(total)
    ]
    queue = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)

    async def client(http: httpx.AsyncClient) -> None:
        while not queue.empty():
            reply = await http.post("/submissions", json=queue.get_nowait())
            if reply.status_code != 202:
                raise SystemExit(f"POST /submissions: {reply.status_code} {reply.text[:300]}")

    async with httpx.AsyncClient(
        base_url=service.url,
        timeout=120,
        limits=httpx.Limits(max_connections=clients),
        headers={"Authorization": f"Bearer {service.token}"},
    ) as http:
        await http.post("/submissions", json=bodies[0])  # warm: first request, first connection
        started = time.perf_counter()
        await asyncio.gather(*[client(http) for _ in range(clients)])
        return total / (time.perf_counter() - started)


def submit_and_wait(service: Service, body: dict) -> float:
    """Seconds from POST to a stored result."""
    import httpx

    with httpx.Client(base_url=service.url, timeout=120, headers={"Authorization": f"Bearer {service.token}"}) as http:
        started = time.perf_counter()
        reply = http.post("/submissions", json={"problem": "vector_add", "solution": body, "mode": "private"})
        reply.raise_for_status()
        location = f"/submissions/{reply.json()['id']}"
        while True:
            state = http.get(location).json()
            if state["status"] in ("done", "failed"):
                if state["status"] != "done" or state["result"] is None:
                    raise SystemExit(f"{location}: {state['status']} {state.get('error')}")
                return time.perf_counter() - started
            time.sleep(0.02)


def bare_eval(problem: Path, body: dict, folder: Path, env: dict) -> float:
    path = folder / f"{body['name']}.json"
    path.write_text(json.dumps(body))
    started = time.perf_counter()
    solbench(
        "eval",
        problem,
        "--solution",
        path,
        "--rounds",
        ROUNDS,
        "--budget",
        BUDGET_S,
        "--device",
        "cpu",
        "--hardware",
        "local",
        "--json",
        env=env,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--submissions", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="solbench-bench-") as scratch:
        folder = Path(scratch)
        suite, settings = prepare(folder)
        env = {**os.environ, "SOLBENCH_CACHE_DIR": str(folder / "cache"), "PYTHONPATH": str(ROOT / "src")}
        solbench("hw", "probe", env=env)  # --hardware local on both sides
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}\n")
        print("submissions accepted per second")
        print(f"{'backend':34} " + " ".join(f"{f'{c} client(s)':>12}" for c in options.clients))
        for name, rate in accept_rates(folder, suite, settings, env, options):
            print(f"{name:34} " + " ".join(f"{r:12.1f}" for r in rate))
        print(f"\noverhead per evaluation (median of {options.repeats}; seconds)")
        overhead(folder, suite, settings, env, options.repeats)


def accept_rates(folder: Path, suite: Path, settings: Path, env: dict, options):
    sqlite = Service(folder / "sqlite", suite, settings, env, "--data", str(folder / "sqlite"), "--workers", "0")
    try:
        yield (
            "SQLite, no workers",
            [asyncio.run(accept_rate(sqlite, c, options.submissions, f"s{c}")) for c in options.clients],
        )
    finally:
        sqlite.close()
    bin_dir = postgres_bin()
    if bin_dir is None or not Path("/usr/bin/redis-server").exists():
        print("(PostgreSQL + Redis skipped: initdb or redis-server not installed)")
        return
    postgres = start_postgres(bin_dir)
    (folder / "redis").mkdir()
    redis = start_redis(folder / "redis")
    try:
        import psycopg

        with psycopg.connect(postgres.url(driver="postgresql"), autocommit=True) as connection:
            connection.execute("CREATE DATABASE bench")
        service = Service(
            folder / "pg",
            suite,
            settings,
            env,
            "--db",
            postgres.url("bench"),
            "--broker",
            redis.url,
            "--data",
            str(folder / "pg"),
        )
        try:
            yield (
                "PostgreSQL + Redis broker",
                [asyncio.run(accept_rate(service, c, options.submissions, f"p{c}")) for c in options.clients],
            )
        finally:
            service.close()
    finally:
        stop_process(redis.process)
        stop_postgres(postgres)


def overhead(folder: Path, suite: Path, settings: Path, env: dict, repeats: int) -> None:
    problem = suite / "L1" / "vector_add"
    service = Service(folder / "embedded", suite, settings, env, "--data", str(folder / "embedded"), "--workers", "1")
    try:
        submit_and_wait(service, solution("warm-up"))  # the worker's first job imports torch; a user's would not
        bare, served, cached = [], [], []
        for i in range(repeats):  # in turns, so drifting load hits both sides alike
            bare.append(bare_eval(problem, solution(f"bare-{i}"), folder, env))
            served.append(submit_and_wait(service, solution(f"served-{i}")))
            cached.append(submit_and_wait(service, solution(f"served-{i}")))
    finally:
        service.close()
    b, s, c = (statistics.median(x) for x in (bare, served, cached))
    print(f"{'bare `solbench eval` (fresh process)':44} {b:8.2f}   1.00")
    print(f"{'server: submit -> result (warm worker)':44} {s:8.2f}   {s / b:.2f}   server - bare: {s - b:+.2f} s")
    print(f"{'server: submit -> result, cached result':44} {c:8.2f}   {c / b:.3f}")
    print(
        "(a bare eval starts a process, imports torch and derives T_SOL each time; the server's worker has torch\n"
        " imported and T_SOL stored, and adds HTTP, the database claim, heartbeats and the result transaction)"
    )


if __name__ == "__main__":
    main()
