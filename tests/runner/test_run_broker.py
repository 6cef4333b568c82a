"""`solbench run --broker`: a suite run spread over `solbench worker` processes gives a local run's summary."""

import json
import time

import pytest

from runner.test_run import FAST, solbench, suite  # noqa: F401  (fixture)
from servers import SolbenchProcess, redis_server, start_worker, wait_until_ready  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow


def _comparable(summary: dict) -> dict:
    """The summary without what timing decides (scores, latencies): statuses, pass counts, sets, errors."""
    problems = [{k: v for k, v in p.items() if k not in ("score", "latency_ms")} for p in summary["problems"]]
    sets = [{k: v for k, v in s.items() if k != "score"} for s in summary["sets"]]
    return {**summary, "problems": problems, "sets": sets}


def test_broker_run_survives_a_killed_worker_and_gives_the_local_summary(suite, tmp_path, probed_home, redis_server):
    args = ["run", suite, "-o", tmp_path / "remote", "--broker", redis_server.url, "--device", "cpu", *FAST]
    workers = [
        start_worker(
            redis_server.url,
            tmp_path / f"{name}.log",
            "--hardware",
            "local",
            "--heartbeat",
            "1",
            "--name",
            f"{name}@test",
            env=probed_home,
            wait=False,
        )
        for name in ("one", "two")
    ]
    try:
        for worker in workers:
            wait_until_ready(worker)
        run = SolbenchProcess(args, tmp_path / "run.log", probed_home)
        holder = wait_for_a_job_holder(redis_server.url, timeout_s=120)
        workers[["one@test", "two@test"].index(holder)].kill()  # with its pool child and sandbox
        assert run.process.wait(timeout=240) == 0, run.output()
        again = solbench(*args, env=probed_home)
    finally:
        for worker in workers:
            worker.stop()
    solbench("run", suite, "-o", tmp_path / "local", "--device", "cpu", "--workers", "2", *FAST, env=probed_home)
    said = " ".join(run.output().split())  # as one line, however the terminal width wrapped it
    assert "2 worker(s) of local" in said
    assert f"on {holder} stopped sending heartbeats; queued to try once more" in said  # the killed worker's job
    remote_summary = json.loads((tmp_path / "remote" / "summary.json").read_text())
    local_summary = json.loads((tmp_path / "local" / "summary.json").read_text())
    assert _comparable(remote_summary) == _comparable(local_summary)
    assert {p["problem"]: p["passed"] for p in remote_summary["problems"]} == {"vector_add": 2, "vector_mul": 2}
    trace = json.loads(
        (tmp_path / "remote" / "traces" / "L1" / "vector_add" / "reference.jsonl").read_text().splitlines()[0]
    )
    assert trace["evaluation"]["solbench"]["sol"]["hardware"] == "local"  # T_SOL attached by the runner
    assert again.returncode == 0 and again.stderr.count("already done") == 2, again.stderr


def wait_for_a_job_holder(broker_url: str, timeout_s: float) -> str:
    """The name of the first worker that records holding a job (runner.celery_app.WorkerLiveness)."""
    import redis

    client = redis.Redis.from_url(broker_url)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            keys = client.keys("solbench:job-holder:*")
            if keys:
                return client.get(keys[0]).decode()
            time.sleep(0.05)
    finally:
        client.close()
    raise AssertionError(f"no worker took a job within {timeout_s:.0f} s")
