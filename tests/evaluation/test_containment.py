"""Process containment, tried as an attacker would: the solution's code runs with the static rules off (they are a
first filter, evaded by code built at run time), and what it does must stay inside its sandbox.

- a victim process started beside the evaluation survives a SIGTERM and a kill(-1) from the sandbox;
- a process detached by fork, setsid, fork and exec with an empty environment (no mark to find it by) is gone when
  the evaluation returns, and the workload is REWARD_HACK naming it;
- the trace names the containment that applied.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from dataclasses import replace

import pytest

from conftest import VECTOR_ADD, make_solution, process_alive, vector_workloads, write_problem
from solbench.evaluation import evaluate
from solbench.evaluation.confinement import root_sandbox_reason
from solbench.evaluation.containment import ProcessContainment, can_make_cgroup, can_make_pid_namespace
from solbench.evaluation.landlock import SCOPE_ABI, abi_version
from solbench.spec import load_problem

scoped_signals = pytest.mark.skipif(
    abi_version() < SCOPE_ABI, reason=f"Landlock ABI {abi_version()} has no signal scoping (needs {SCOPE_ABI})"
)


@pytest.fixture
def victim():
    """A process of the evaluator's own user, outside any sandbox."""
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield process
    process.kill()
    process.wait()


_CGROUP = can_make_cgroup()
_PID_NAMESPACE = can_make_pid_namespace()
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
"""The probes run in a CUDA sandbox too where a GPU is lent (scripts/device-check runs the gpu marker)."""


def _evaluate(tmp_path, source: str, config, device: str = "cpu"):
    problem = load_problem(write_problem(tmp_path / "vector_add", VECTOR_ADD, vector_workloads(1000)))
    return evaluate(problem, make_solution(source), replace(config, static_check=False, device=device))


# Only the victim gets a real signal: a broken scope must not take the test run down with it (kill(-1, SIGKILL) from
# a sandbox of root's uid reaches every root process, this test's and CI's included), so the rest are probes (0).
@pytest.mark.slow
@scoped_signals
@pytest.mark.parametrize("device", DEVICES)
def test_a_victim_beside_the_evaluation_survives_the_sandboxs_signals(tmp_path, fast_config, victim, device):
    source = (
        f"import os, signal\nerrors = []\n"
        f"for target, sig in (({victim.pid}, signal.SIGTERM), (os.getppid(), 0), (1, 0), (-1, 0)):\n"
        "    try:\n        os.kill(target, sig)\n        errors.append('sent')\n"
        "    except OSError as error:\n        errors.append(type(error).__name__)\n"
        "print('signals:', errors)\n"
        "def run(x, y):\n    return x + y\n"
    )
    traces = _evaluate(tmp_path, source, fast_config, device)
    time.sleep(0.2)
    assert victim.poll() is None, "a process outside the sandbox was killed from inside it"
    assert [t.evaluation.status.value for t in traces] == ["PASSED"]
    assert "signals: ['PermissionError', 'PermissionError', 'PermissionError'" in traces[0].evaluation.log
    assert traces[0].evaluation.solbench.confinement["signals"].startswith("scoped to the sandbox")


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("containment", ["auto", "pid-namespace", "subreaper"])
def test_a_process_detached_with_an_empty_environment_does_not_outlive_the_evaluation(
    tmp_path, fast_config, device, containment
):
    """Each containment, the fallbacks capped on purpose, holds the escaped process (the trace names which)."""
    pid_file = tmp_path / "escaped.pid"
    source = (
        "import os\n"
        "first = getattr(os, 'fo' + 'rk')()\n"
        "if first == 0:\n    os.setsid()\n"
        "    second = getattr(os, 'fo' + 'rk')()\n"
        "    if second == 0:\n        getattr(os, 'exec' + 've')('/bin/sleep', ['sleep', '30'], {})\n"
        "    print('escaped', second, flush=True)\n"
        "    getattr(os, '_exit')(0)\n"
        "getattr(os, 'wait' + 'pid')(first, 0)\n"
        "def run(x, y):\n    return x + y\n"
    )
    traces = _evaluate(tmp_path, source, replace(fast_config, containment=containment), device)
    evaluation = traces[0].evaluation
    assert evaluation.status.value == "REWARD_HACK", evaluation.solbench.failure
    assert evaluation.solbench.failed_rule == "processes"
    # The evidence names the pid as the evaluator sees it (inside a PID namespace the sandbox sees another).
    escaped = int(re.search(r"pid (\d+) \(sleep\)", evaluation.solbench.failure).group(1))
    pid_file.write_text(str(escaped))
    assert not process_alive(escaped), f"pid {escaped} outlived the evaluation"
    namespace = "PID namespace" if _PID_NAMESPACE else "subreaper"
    expected = {"auto": "cgroup v2" if _CGROUP else namespace, "pid-namespace": namespace, "subreaper": "subreaper"}
    assert expected[containment] in evaluation.solbench.confinement["processes"]


@pytest.mark.slow
def test_children_in_the_sandboxs_own_group_are_allowed_and_killed_with_it(tmp_path, fast_config):
    """A helper process that stays in the sandbox's group (a compiler, torch.compile's workers) is honest."""
    source = (
        "import subprocess\n"
        "helper = subprocess.Popen(['sleep', '30'])\n"
        "print('helper', helper.pid, flush=True)\n"
        "def run(x, y):\n    return x + y\n"
    )
    traces = _evaluate(tmp_path, source, fast_config)
    helper = int(traces[0].evaluation.log.split("helper ", 1)[1].split()[0])
    assert [t.evaluation.status.value for t in traces] == ["PASSED"]
    assert not process_alive(helper)


@pytest.mark.slow
@pytest.mark.skipif(not _PID_NAMESPACE, reason="no permission for a PID namespace here (needs CAP_SYS_ADMIN)")
def test_a_pid_namespace_hides_every_process_outside_the_sandbox(tmp_path, fast_config, victim):
    """Without Landlock's scoping (before Linux 6.12) the namespace alone must keep signals in: outside processes do
    not exist for the sandbox (ESRCH, not the EPERM of Landlock), and kill(-1) reaches only its own."""
    source = (
        f"import os\nerrors = []\n"
        f"for target in ({victim.pid}, {os.getpid()}, -1):\n"
        "    try:\n        os.kill(target, 0)\n        errors.append('sent')\n"
        "    except OSError as error:\n        errors.append(type(error).__name__)\n"
        "print('signals:', errors, 'pid', os.getpid())\n"
        "def run(x, y):\n    return x + y\n"
    )
    traces = _evaluate(tmp_path, source, replace(fast_config, containment="pid-namespace"))
    assert [t.evaluation.status.value for t in traces] == ["PASSED"], traces[0].evaluation.solbench.failure
    assert (
        "signals: ['ProcessLookupError', 'ProcessLookupError', 'ProcessLookupError'] pid 1" in traces[0].evaluation.log
    )
    assert "PID namespace" in traces[0].evaluation.solbench.confinement["processes"]


def test_the_pid_namespace_is_made_for_the_sandbox_alone():
    """The evaluator's thread is back in its own namespace once the sandbox started: a later child is not in a
    namespace that dies with that sandbox."""
    processes = ProcessContainment("test", "pid-namespace")
    with processes.spawning():
        inside = subprocess.run(["python3", "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    after = subprocess.run(["python3", "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    if not processes.pid_namespace:
        pytest.skip("no permission for a PID namespace here (needs CAP_SYS_ADMIN)")
    assert inside.stdout.split() == ["1"] and after.stdout.split() != ["1"]
    assert os.readlink("/proc/thread-self/ns/pid") == os.readlink(f"/proc/{os.getpid()}/ns/pid")


def test_a_subreaper_sandbox_finds_an_orphan_and_kills_every_process():
    """Where no cgroup can be made, orphans are reparented to the sandbox and found in its tree."""
    processes = ProcessContainment("test", "subreaper")
    assert "subreaper" in processes.mechanism
    script = (
        "import os, time\n"
        "if os.fork() == 0:\n    os.setsid()\n"
        "    if os.fork() == 0:\n        time.sleep(30)\n    os._exit(0)\n"
        "time.sleep(30)\n"
    )
    sandbox = subprocess.Popen(["python3", "-c", script], start_new_session=True, preexec_fn=processes.enter)
    try:
        deadline = time.monotonic() + 10
        while not processes.detached(sandbox.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        [orphan] = processes.detached(sandbox.pid)
        assert orphan.group != sandbox.pid
        processes.kill_all(sandbox.pid)
        sandbox.wait(timeout=10)
        processes.release()
        assert not process_alive(orphan.pid)
    finally:
        if sandbox.poll() is None:
            os.killpg(sandbox.pid, signal.SIGKILL)
            sandbox.wait()


def test_services_refuse_sandboxes_that_would_keep_root_unless_told(monkeypatch):
    import solbench.evaluation.confinement as confinement
    from solbench.evaluation.errors import RootSandboxRefused

    monkeypatch.setattr(confinement.os, "geteuid", lambda: 0)
    monkeypatch.setattr(confinement, "_world_can_run", lambda executable: False)
    with pytest.raises(RootSandboxRefused, match="--allow-root-sandbox"):
        confinement.require_unprivileged_sandbox(allow_root=False)
    confinement.require_unprivileged_sandbox(allow_root=True)
    monkeypatch.setattr(confinement, "_world_can_run", lambda executable: True)  # nobody reaches it: no question
    confinement.require_unprivileged_sandbox(allow_root=False)


@pytest.mark.slow
@pytest.mark.skipif(
    root_sandbox_reason() is None,
    reason="sandboxes started here do not keep root (not root, or nobody reaches the interpreter)",
)
@pytest.mark.parametrize("command", [["serve", "--port", "1"], ["worker", "--broker", "redis://127.0.0.1:1/0"]])
def test_serve_and_worker_refuse_a_root_sandbox_in_one_line(tmp_path, command):
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "solbench", *command], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert "sandboxes would run as root" in done.stderr and "--allow-root-sandbox" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_serve_and_worker_say_plainly_what_sandboxes_here_lack(monkeypatch):
    """Printed by `solbench serve` and `solbench worker` before any submission runs (issue 27)."""
    import solbench.evaluation.confinement as confinement
    import solbench.evaluation.containment as containment_module

    here = confinement.describe_sandboxes()
    assert here.startswith("user ") and "; processes: " in here and "; signals: " in here
    monkeypatch.setattr(confinement.os, "geteuid", lambda: 1000)  # not root: no PID namespace
    monkeypatch.setattr(confinement.landlock, "abi_version", lambda: 5)  # before signal scoping
    monkeypatch.setattr(containment_module, "_make_cgroup", lambda name: None)
    weakest = confinement.describe_sandboxes()
    assert "user this user (not root)" in weakest and "a subreaper each, the weakest hold" in weakest
    assert "signals: NOT scoped (Landlock ABI 5 < 6, no PID namespace)" in weakest
