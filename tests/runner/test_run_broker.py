"""`solbench run --broker`: a suite run spread over `solbench worker` processes gives a local run's summary."""

import json

import pytest

from servers import redis_server, start_worker  # noqa: F401  (fixture)
from runner.test_run import FAST, solbench, suite  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow


def _comparable(summary: dict) -> dict:
    """The summary without what timing decides (scores, latencies): statuses, pass counts, sets, errors."""
    problems = [{k: v for k, v in p.items() if k not in ("score", "latency_ms")} for p in summary["problems"]]
    sets = [{k: v for k, v in s.items() if k != "score"} for s in summary["sets"]]
    return {**summary, "problems": problems, "sets": sets}


def test_broker_run_gives_the_local_summary_and_resumes(suite, tmp_path, probed_home, redis_server):  # noqa: F811
    worker = start_worker(redis_server.url, tmp_path / "worker.log", "--hardware", "local", "--device", "cpu",
                          env=probed_home)
    try:
        remote = solbench("run", suite, "--solution-name", "fast", "-o", tmp_path / "remote", "--broker",
                          redis_server.url, "--device", "cpu", *FAST, env=probed_home)
        again = solbench("run", suite, "--solution-name", "fast", "-o", tmp_path / "remote", "--broker",
                         redis_server.url, "--device", "cpu", *FAST, env=probed_home)
    finally:
        worker.stop()
    local = solbench("run", suite, "--solution-name", "fast", "-o", tmp_path / "local", "--device", "cpu", *FAST,
                     env=probed_home)
    assert remote.returncode == 0, remote.stderr
    assert "1 worker(s) of local" in remote.stderr and "evaluate_job" in worker.output()
    remote_summary = json.loads((tmp_path / "remote" / "summary.json").read_text())
    local_summary = json.loads((tmp_path / "local" / "summary.json").read_text())
    assert _comparable(remote_summary) == _comparable(local_summary)
    assert remote_summary["problems"][0]["statuses"] == {"INCORRECT_NUMERICAL": 2}  # the shipped wrong solution
    trace = json.loads((tmp_path / "remote" / "traces" / "L1" / "vector_add" / "fast.jsonl").read_text().splitlines()[0])
    assert trace["evaluation"]["solbench"]["sol"]["hardware"] == "local"  # T_SOL attached by the runner
    assert again.returncode == 0 and again.stderr.count("already done") == 1, again.stderr


def test_broker_run_names_an_unreachable_broker(suite, tmp_path, probed_home):  # noqa: F811
    result = solbench("run", suite, "-o", tmp_path / "out", "--broker", "redis://127.0.0.1:9/0", *FAST,
                      env=probed_home)
    assert result.returncode == 2
    assert "redis://127.0.0.1:9/0: cannot reach the broker" in result.stderr
