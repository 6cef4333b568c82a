"""Every command's exit status as a real process returns it (not CliRunner's, which runs Typer standalone):
0 success, 1 a failed check, tested workload or replay that differs, 2 bad input, 130 interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import VECTOR_ADD, solution_dict, vector_workloads, write_problem

BROKEN_DEFINITION = {**VECTOR_ADD, "outputs": {"z": {"shape": ["M"], "dtype": "float32"}}}  # an unknown axis


def solbench(*args, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def without_workspace() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "SOLBENCH_WORKSPACE"}


@pytest.fixture
def broken_set(tmp_path) -> Path:
    """A folder holding one problem whose definition does not load: a failure found before anything runs."""
    write_problem(tmp_path / "set" / "bad", BROKEN_DEFINITION, vector_workloads(16))
    return tmp_path / "set"


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "/nonexistent", "--reference", "--device", "cpu"],
        ["sol", "/nonexistent", "--hardware", "H100_SXM"],
        ["score", "/nonexistent.jsonl", "--hardware", "H100_SXM"],
        ["check", "/nonexistent.json"],
        ["validate", "/nonexistent"],
        ["run", "/nonexistent"],
        ["baseline", "/nonexistent", "-o", "baselines.json"],
        ["extract", "--module", "attention"],
        ["mcp", "--no-such-option"],
        ["openenv-serve", "rmsnorm", "--server", "http://127.0.0.1:9", "--cache", "cache"],
        ["optimize", "/nonexistent"],
        ["test", "/nonexistent.json"],
        ["template", "/nonexistent", "--device", "cpu"],
        ["replay", "/nonexistent"],
        ["report", "/nonexistent"],
        ["export", "trajectories", "/nonexistent", "-o", "out.jsonl"],
        ["serve", "--no-such-option"],
        ["submit", "/nonexistent.json", "--server", "ftp://nowhere", "--token", "t"],
        ["status", "1", "--server", "ftp://nowhere", "--token", "t"],
        ["worker", "--broker", "http://not-redis"],
        ["reach"],
        ["hw", "list", "--no-such-option"],
        ["hw", "show", "no-such-hardware"],
        ["hw", "probe", "--no-such-option"],
        ["suite", "stats", "/nonexistent"],
        ["suite", "build", "--recipes", "/nonexistent"],
        ["suite", "sync-references", "/nonexistent"],
        ["suite", "import", "/nonexistent"],
        ["suite", "fetch", "--no-such-option"],
        ["suite", "cpu-tier", "/nonexistent"],
        ["admin", "add-user", "bob", "--settings", "/nonexistent.json"],
        ["admin", "revoke-token", "bob", "--settings", "/nonexistent.json"],
        ["admin", "ban", "bob", "--settings", "/nonexistent.json"],
        ["admin", "freeze", "--settings", "/nonexistent.json"],
        ["admin", "flag", "1", "--reason", "x", "--settings", "/nonexistent.json"],
        ["admin", "unflag", "1", "--settings", "/nonexistent.json"],
        ["admin", "rescore", "--settings", "/nonexistent.json"],
        [],
    ],
    ids=lambda args: " ".join(args[:2]) or "no command",
)
def test_bad_input_exits_2(args, tmp_path):
    result = solbench(*args, cwd=tmp_path, env=without_workspace())
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr


def test_every_command_has_a_bad_input_case():
    from typer.main import get_command

    from solbench.cli.app import app

    def names(group, prefix=""):
        for name, command in group.commands.items():
            yield from names(command, f"{prefix}{name} ") if hasattr(command, "commands") else [prefix + name]

    parameters = test_bad_input_exits_2.pytestmark[0].args[1]
    groups = (["hw"], ["suite"], ["admin"], ["export"])
    covered = {" ".join(a[:2]) if a[:1] in groups else a[0] for a in parameters if a}
    assert set(names(get_command(app))) == covered


def test_check_exits_1_on_a_blocking_finding(tmp_path):
    dirty = tmp_path / "dirty.json"
    dirty.write_text(
        json.dumps(solution_dict("import time\ntime.perf_counter = time.time\ndef run(x, y):\n    return x + y\n"))
    )
    result = solbench("check", dirty)
    assert result.returncode == 1, result.stderr


def test_validate_and_sol_exit_1_when_a_problem_fails(broken_set):
    for args in (["validate", broken_set], ["sol", broken_set, "--hardware", "H100_SXM"]):
        result = solbench(*args)
        assert result.returncode == 1, (args, result.stderr)
        assert "unknown axis 'M'" in result.stdout + result.stderr and "Traceback" not in result.stderr


def test_run_exits_1_when_a_problem_cannot_be_evaluated(broken_set, tmp_path):
    result = solbench("run", broken_set, "--device", "cpu", "--hardware", "H100_SXM", "--out", tmp_path / "out")
    assert result.returncode == 1, result.stderr
    assert "unknown axis 'M'" in result.stderr and "internal error" not in result.stderr
    assert (tmp_path / "out" / "summary.json").is_file()  # written although no job wrote traces


def _answering_loop(folder: Path, passed: bool):
    """A stand-in for the optimisation loop's side of the test channel, answering every request the same way."""
    from solbench.optimize.channel import ChannelServer

    status = "PASSED" if passed else "INCORRECT_NUMERICAL"
    result = {"passed": passed, "seconds": 0.1, "workloads": [{"workload": "n16", "status": status}]}
    server = ChannelServer(folder, lambda request: {"result": result, "budget_left": {"tests": 3}})
    server.open(1)
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            server.serve()
            stop.wait(0.02)

    thread = threading.Thread(target=loop)
    thread.start()

    def close():
        stop.set()
        thread.join()
        server.close()

    return close


@pytest.mark.parametrize("passed, status", [(False, 1), (True, 0)])
def test_solbench_test_exits_1_when_a_tested_workload_fails(tmp_path, passed, status):
    (tmp_path / "solution.json").write_text(json.dumps(solution_dict("def run(x, y):\n    return x - y\n")))
    close = _answering_loop(tmp_path, passed)
    try:
        result = solbench("test", "solution.json", cwd=tmp_path, env=without_workspace())
    finally:
        close()
    assert result.returncode == status, result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith("passed" if passed else "failed")


def test_ctrl_c_while_solbench_test_waits_exits_130(tmp_path):
    """No loop answers: the command waits in its poll until Ctrl-C."""
    from solbench.optimize.channel import ChannelServer

    (tmp_path / "solution.json").write_text(json.dumps(solution_dict("def run(x, y):\n    return x + y\n")))
    server = ChannelServer(tmp_path, lambda request: {})
    server.open(1)
    waiting = subprocess.Popen(
        [sys.executable, "-m", "solbench", "test", "solution.json"],
        cwd=tmp_path,
        env=without_workspace(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as from a terminal
    )
    try:
        requests = tmp_path / ".solbench" / "requests"
        deadline = time.monotonic() + 60  # a safety net against a hang, not a timing check
        while not any(requests.glob("*.json")) and waiting.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert waiting.poll() is None, waiting.communicate()[1]
        waiting.send_signal(signal.SIGINT)
        _, stderr = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.communicate()
        server.close()
    assert waiting.returncode == 130, stderr
    assert "solbench: interrupted" in stderr and "Traceback" not in stderr


@pytest.mark.slow
def test_replay_exits_1_when_the_replay_differs_from_the_record(tmp_path):
    """A bundle whose solution is wrong, recorded as PASSED: the replay finds INCORRECT_NUMERICAL."""
    bundle = tmp_path / "submission.bundle.json"
    bundle.write_text(
        json.dumps(
            {
                "format": "solbench-bundle/1",
                "submission": {"id": 1},
                "solution": solution_dict("import torch\ndef run(x, y):\n    return x - y\n"),
                "problem": {
                    "name": "vector_add",
                    "version": "v1",
                    "definition": VECTOR_ADD,
                    "workloads": vector_workloads(16),
                },
                "result": None,
                "traces": [],
            }
        )
    )
    result = solbench("replay", bundle, "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["agrees"] is False and [row["replay_status"] for row in report["rows"]] != ["PASSED"]


@pytest.mark.slow
def test_eval_exits_0_whatever_the_statuses(vector_add_problem, tmp_path):
    """eval's documented contract: a solution that fails its workloads is data (the traces), not a failed command."""
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(solution_dict("import torch\ndef run(x, y):\n    return x - y\n")))
    result = solbench("eval", vector_add_problem, "--solution", wrong, "--device", "cpu", "--json")
    assert result.returncode == 0, result.stderr
    assert {trace["evaluation"]["status"] for trace in json.loads(result.stdout)} == {"INCORRECT_NUMERICAL"}
