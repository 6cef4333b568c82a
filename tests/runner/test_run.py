"""`solbench run`, `solbench baseline` and `solbench suite stats` on a tiny suite, through real processes."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import VECTOR_ADD, solution_dict, vector_workloads, write_problem

FAST = ["--rounds", "1", "--budget", "0.01"]


def solbench(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def suite(tmp_path) -> Path:
    root = tmp_path / "suite"
    add = {**VECTOR_ADD, "tags": ["set:L1", "model:Toy", "domain:language", "pass:forward", "origin:recipe"]}
    write_problem(root / "L1" / "vector_add", add, vector_workloads(1000, 3000))
    mul = {
        **VECTOR_ADD,
        "name": "vector_mul",
        "op_type": "multiply",
        "tags": ["set:L2", "model:Other", "domain:vision", "pass:backward", "origin:extract"],
        "reference": "import torch\n\ndef run(x, y):\n    return x * y\n",
    }
    write_problem(root / "L2" / "vector_mul", mul, vector_workloads(500, 2000))
    wrong = solution_dict("import torch\n\ndef run(x, y):\n    return x - y\n", name="wrong")
    (root / "L1" / "vector_add" / "solutions").mkdir()
    (root / "L1" / "vector_add" / "solutions" / "fast.json").write_text(json.dumps(wrong))
    return root


@pytest.mark.slow
def test_run_evaluates_every_problem_resumes_and_summarises(suite, tmp_path, probed_home):
    out = tmp_path / "run"
    first = solbench("run", suite, "-o", out, "--workers", "2", *FAST, env=probed_home)
    assert first.returncode == 0, first.stderr
    assert "[2/2]" in first.stderr and "2 PASSED" in first.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["hardware"] == "local"
    assert {s["set"]: (s["problems_passed"], s["workloads_passed"]) for s in summary["sets"]} == {
        "L1": (1, 2),
        "L2": (1, 2),
    }
    assert all(p["score"] is not None and 0 < p["score"] < 1 for p in summary["problems"])
    traces = (out / "traces" / "L1" / "vector_add" / "reference.jsonl").read_text().splitlines()
    assert len(traces) == 2 and json.loads(traces[0])["evaluation"]["solbench"]["sol"]["hardware"] == "local"

    again = solbench("run", suite, "-o", out, *FAST, env=probed_home)
    assert again.returncode == 0 and again.stderr.count("already done") == 2
    rerun = solbench("run", suite, "-o", out, "--category", "l2", "--rerun", *FAST, env=probed_home)
    assert rerun.returncode == 0 and "L2/vector_mul" in rerun.stderr and "L1/" not in rerun.stderr


def ship_plain_solution(problem: Path, name: str, operator: str = "+") -> None:
    (problem / "solutions").mkdir(exist_ok=True)
    source = f"import torch\n\ndef run(x, y):\n    return x {operator} y\n"
    (problem / "solutions" / "plain.json").write_text(json.dumps(solution_dict(source, definition=name, name="plain")))


def held_problem(suite: Path, name: str, notes: Path) -> Path:
    """A problem in set A whose reference appends its process id to NAME.pids, then waits while NAME.hold exists.

    The reference runs in the pool worker itself, so the id is the worker's, and the job lasts until
    the test lets it go (or kills that worker). Its solution `plain` is an ordinary one.
    """
    pids, hold = notes / f"{name}.pids", notes / f"{name}.hold"
    hold.touch()
    reference = (
        f"import os\nimport time\n\ndef run(x, y):\n"
        f"    with open({str(pids)!r}, 'a') as pids:\n        pids.write(f'{{os.getpid()}}\\n')\n"
        f"    while os.path.exists({str(hold)!r}):\n        time.sleep(0.05)\n    return x + y\n"
    )
    problem = write_problem(
        suite / "A" / name,
        {**VECTOR_ADD, "name": name, "tags": ["set:A"], "reference": reference},
        vector_workloads(1000),
    )
    ship_plain_solution(problem, name)
    return hold


def next_pid(pids: Path, run: subprocess.Popen, seen: set[int]) -> int:
    """The first process id written to `pids` that is not in `seen`, once there is one."""
    deadline = time.monotonic() + 300  # a safety net against a hung run, not a timing check
    while time.monotonic() < deadline and run.poll() is None:
        new = [int(line) for line in (pids.read_text().split() if pids.exists() else []) if int(line) not in seen]
        if new:
            return new[0]
        time.sleep(0.05)
    raise AssertionError(f"no new process id in {pids}; the run ended with {run.poll()}: {run.communicate()[1]}")


@pytest.fixture
def started(probed_home, tmp_path):
    """Starts `solbench run` without waiting for it; at the end lets held jobs go and stops any run still going."""
    runs: list[subprocess.Popen] = []

    def start(*args) -> subprocess.Popen:
        runs.append(
            subprocess.Popen(
                [sys.executable, "-m", "solbench", "run", *map(str, args)],
                text=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, **probed_home},
                # as from a terminal: test runners' workers (pytest-xdist) ignore Ctrl-C
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            )
        )
        return runs[-1]

    yield start
    for hold in tmp_path.glob("*.hold"):
        hold.unlink()
    for run in runs:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)
            try:
                run.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                run.kill()
                run.communicate()


@pytest.mark.slow
def test_a_killed_worker_costs_only_its_job_which_is_retried_once_then_left_for_a_resume(
    suite, tmp_path, probed_home, started
):
    held = held_problem(suite, "held", tmp_path)
    gate = held_problem(suite, "gated", tmp_path)
    ship_plain_solution(suite / "L1" / "vector_add", "vector_add")
    out = tmp_path / "run"
    plain = ["--solution-name", "plain", "--workers", "2", *FAST]
    run = started(suite, "-o", out, *plain)
    first = next_pid(tmp_path / "held.pids", run, set())
    next_pid(tmp_path / "gated.pids", run, set())  # both workers busy, vector_add queued
    os.kill(first, signal.SIGKILL)
    gate.unlink()
    os.kill(next_pid(tmp_path / "held.pids", run, {first}), signal.SIGKILL)  # and again on its retry
    _, stderr = run.communicate(timeout=600)
    assert run.returncode == 1, stderr
    assert "A/held/plain · its worker process was killed by SIGKILL" in stderr
    assert "A/held/plain · lost: its worker process died" in stderr and "[3/3]" in stderr
    assert "1 job(s) lost to dead worker processes" in stderr
    traces = out / "traces"
    assert sorted(p.relative_to(traces).as_posix() for p in traces.glob("*/*/*.jsonl")) == [
        "A/gated/plain.jsonl",
        "L1/vector_add/plain.jsonl",
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lost_to_dead_workers"] == 1
    assert [(p["problem"], p["passed"]) for p in summary["problems"]] == [("gated", 1), ("vector_add", 2)]
    [error] = summary["errors"]
    assert (
        error.startswith("A/held/plain: the worker process running it was killed by SIGKILL")
        and "on each of 2 attempts" in error
    )

    held.unlink()
    resumed = solbench("run", suite, "-o", out, *plain, env=probed_home)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.count("already done") == 2 and "A/held/plain · 1 PASSED" in resumed.stderr, resumed.stderr
    assert json.loads((out / "summary.json").read_text())["lost_to_dead_workers"] == 0


@pytest.mark.slow
def test_ctrl_c_stops_a_pool_run_and_its_workers(suite, tmp_path, started):
    held_problem(suite, "held", tmp_path)
    run = started(suite, "-o", tmp_path / "run", "--solution-name", "plain", "-j", "2", "--name", "held", *FAST)
    worker = next_pid(tmp_path / "held.pids", run, set())
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130, stderr
    with pytest.raises(ProcessLookupError):  # the runner stopped and reaped its worker before it exited
        os.kill(worker, 0)
    assert not list((tmp_path / "run").glob("traces/*/*/*.jsonl"))


@pytest.mark.slow
def test_a_named_solution_runs_where_shipped_and_is_skipped_elsewhere(suite, tmp_path, probed_home):
    result = solbench("run", suite, "-o", tmp_path / "r", "--solution-name", "fast", *FAST, env=probed_home)
    assert result.returncode == 0, result.stderr
    assert "vector_mul: no solution named 'fast'" in result.stderr
    assert "2 INCORRECT_NUMERICAL" in result.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert [(p["problem"], p["passed"], p["score"]) for p in summary["problems"]] == [("vector_add", 0, 0.0)]


@pytest.mark.slow
def test_baseline_writes_versioned_data_that_run_scores_with(suite, tmp_path, probed_home):
    baselines = tmp_path / "baselines.json"
    made = solbench(
        "baseline",
        suite,
        "-o",
        baselines,
        "--no-compile",
        "--work",
        tmp_path / "w",
        "--limit",
        "1",
        *FAST,
        env=probed_home,
    )
    assert made.returncode == 0, made.stderr
    data = json.loads(baselines.read_text())
    assert data["version"] == 1 and "local CPU" in data["hardware_description"]
    assert {(b["definition"], b["hardware"], b["source"]) for b in data["baselines"]} == {
        ("vector_add", "local", "reference (eager)")
    }
    assert len(data["baselines"]) == 2 and all(b["latency_ms"] > 0 for b in data["baselines"])

    scored = solbench(
        "run", suite, "-o", tmp_path / "r", "--baselines", baselines, "--name", "add", *FAST, env=probed_home
    )
    assert scored.returncode == 0, scored.stderr
    [trace] = [
        json.loads(line)
        for line in (tmp_path / "r" / "traces" / "L1" / "vector_add" / "reference.jsonl").read_text().splitlines()
    ][:1]
    sol = trace["evaluation"]["solbench"]["sol"]
    assert sol["baseline_source"] == "reference (eager)" and sol["score"] is not None


@pytest.mark.slow
def test_baseline_includes_the_reference_under_torch_compile(suite, tmp_path, probed_home):
    baselines = tmp_path / "b.json"
    made = solbench(
        "baseline", suite, "-o", baselines, "--work", tmp_path / "w", "--name", "mul", *FAST, env=probed_home
    )
    assert made.returncode == 0, made.stderr
    assert "L2/vector_mul/reference-compiled · 2 PASSED" in made.stderr
    sources = {b["source"] for b in json.loads(baselines.read_text())["baselines"]}
    assert sources <= {"reference (eager)", "reference (torch.compile)"} and sources


def test_bad_input_is_one_line_and_exit_2(suite, tmp_path, isolated_cache):
    """Also on a machine never probed: input is checked before the CPU would be probed."""
    missing = solbench("run", tmp_path / "missing")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1, missing.stderr
    nothing = solbench("run", suite, "--category", "Quant", "-o", tmp_path / "x")
    assert nothing.returncode == 2 and "no problems match" in nothing.stderr and nothing.stderr.count("\n") == 1
    bad_baselines = tmp_path / "b.json"
    bad_baselines.write_text("{}")
    broken = solbench("run", suite, "--baselines", bad_baselines, "-o", tmp_path / "x")
    assert broken.returncode == 2 and "b.json" in broken.stderr and broken.stderr.count("\n") == 1
    assert not (isolated_cache / "hardware").exists()


@pytest.mark.slow
def test_run_on_a_never_probed_cpu_probes_it_once_saying_so_and_scores(suite, tmp_path, isolated_cache):
    out = tmp_path / "run"
    first = solbench("run", suite, "--name", "vector_add", "-o", out, *FAST)
    assert first.returncode == 0, first.stderr
    assert "no probe of this CPU is stored" in first.stderr and "probed this CPU in" in first.stderr
    assert (isolated_cache / "hardware" / "local.json").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["hardware"] == "local" and summary["problems"][0]["score"] is not None
    again = solbench("run", suite, "--name", "vector_add", "-o", out, "--rerun", *FAST)
    assert again.returncode == 0 and "probing" not in again.stderr


def test_suite_stats_counts_every_dimension(suite):
    result = solbench("suite", "stats", suite, "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["problems"] == 2 and stats["workloads"] == 4 and stats["models"] == 2
    assert stats["backward_share"] == 0.5
    assert stats["counts"]["set"] == {"L1": 1, "L2": 1}
    assert stats["counts"]["op_type"] == {"elementwise": 1, "multiply": 1}
    assert stats["counts"]["dtype"] == {"float32": 2}
    assert stats["set_by_domain"] == {"L1": {"language": 1}, "L2": {"vision": 1}}
    table = solbench("suite", "stats", suite)
    assert "2 problems · 4 workloads · 2 models (2 architectures) · 50% backward" in table.stdout
    assert stats["architectures"] == 2 and {row["target"] for row in stats["targets"]} >= {"problems", "L1"}
    assert "beside SOL-ExecBench" in table.stdout
