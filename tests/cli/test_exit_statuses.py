"""`solbench eval`'s exit statuses: 1 for a bug in solbench, 2 for bad input, 130 for Ctrl-C."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import solution_dict
from solbench.cli.app import main
from solbench.errors import SolbenchError


def _run_main(monkeypatch, capsys, *args) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["solbench", *map(str, args)])
    with pytest.raises(SystemExit) as stopped:
        main()
    return stopped.value.code, capsys.readouterr().err


@pytest.mark.parametrize(
    "failure, status, message",
    [
        (RuntimeError("injected harness bug"), 1, "internal error; please report it"),
        (SolbenchError("injected bad input"), 2, "solbench: error: injected bad input"),
    ],
)
def test_an_unexpected_exception_in_the_evaluator_exits_1_and_bad_input_2(
    vector_add_problem, monkeypatch, capsys, failure, status, message
):
    """The evaluator's first step (the static check) raises: nothing starts, and the status tells bug from input."""
    import solbench.evaluation.evaluator

    calls = []

    def broken(solution):
        calls.append(solution.name)
        raise failure

    monkeypatch.setattr(solbench.evaluation.evaluator, "check_solution", broken)
    code, stderr = _run_main(monkeypatch, capsys, "eval", vector_add_problem, "--reference", "--device", "cpu")
    assert len(calls) == 1, "the injected failure was not reached: the seam moved"
    assert code == status, stderr
    assert message in stderr
    if status == 1:
        assert "RuntimeError: injected harness bug" in stderr  # the traceback, for the report
    else:
        assert stderr.count("\n") == 1 and "Traceback" not in stderr


def _descendants(root: int) -> set[int]:
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(predicate, seconds: float):
    deadline = time.monotonic() + seconds  # a safety net against a hang, not a timing check
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return None


def _sleeping(pid: int) -> bool:
    """The process's main thread is inside a sleep call (time.sleep): what the kernel says it waits in."""
    try:
        if "nanosleep" in Path(f"/proc/{pid}/wchan").read_text():
            return True
        return Path(f"/proc/{pid}/syscall").read_text().split()[0] in {"35", "230"}  # x86-64 (clock_)nanosleep
    except (OSError, IndexError):
        return False


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.slow
def test_ctrl_c_while_a_solution_runs_exits_130_and_stops_the_sandbox(vector_add_problem, tmp_path):
    solution = tmp_path / "sleepy.json"
    solution.write_text(
        json.dumps(solution_dict("import time\ndef run(x, y):\n    time.sleep(300)\n    return x + y\n"))
    )
    traces = tmp_path / "traces.jsonl"
    evaluation = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "solbench",
            "eval",
            str(vector_add_problem),
            "--solution",
            str(solution),
            "--device",
            "cpu",
            "--timeout",
            "600",
            "-o",
            str(traces),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: test runners' workers (pytest-xdist) ignore Ctrl-C
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:

        def in_the_call():
            if evaluation.poll() is not None:
                return -1
            return next(
                (
                    pid
                    for pid in _descendants(evaluation.pid)
                    if _sleeping(pid) and b"solbench.sandbox.child" in _cmdline(pid)
                ),
                None,
            )

        sandbox = _wait_for(in_the_call, 300)
        assert sandbox and sandbox > 0, (
            f"the solution was never called; eval ended with {evaluation.poll()}: {evaluation.communicate()[1]}"
        )
        started = _descendants(evaluation.pid)
        evaluation.send_signal(signal.SIGINT)
        _, stderr = evaluation.communicate(timeout=120)
    finally:
        if evaluation.poll() is None:
            evaluation.kill()
            evaluation.communicate()
    assert evaluation.returncode == 130, stderr
    assert "solbench: interrupted" in stderr and "Traceback" not in stderr, stderr
    assert not traces.exists()  # an interrupted evaluation records nothing
    assert _wait_for(lambda: not any(_alive(pid) for pid in started), 30), (
        f"left running after Ctrl-C: {[pid for pid in started if _alive(pid)]}"
    )
