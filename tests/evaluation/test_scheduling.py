"""The evaluator's CPU scheduling is restored before the reference is timed, and a change is reported."""

import os
import threading
import time

import pytest

from conftest import VECTOR_ADD, make_solution, vector_workloads, write_problem
from solbench.evaluation import evaluate
from solbench.evaluation.scheduling import Scheduling, restore
from solbench.spec import load_problem
from solbench.spec.trace import EvaluationStatus

TWO_CPUS = len(os.sched_getaffinity(0)) >= 2


@pytest.mark.skipif(not TWO_CPUS, reason="needs two CPUs to pin to one")
def test_restore_gives_every_thread_back_its_affinity_and_nice_value():
    """Any user may widen its threads' affinity again; lowering a nice value needs CAP_SYS_NICE, so without it
    the raised value stays, and is reported again at the next restore."""
    baseline = Scheduling.of()
    if baseline.nice > 14:
        pytest.skip(f"this process runs at nice {baseline.nice}: no room to raise it by 5")
    pinned = threading.Event()
    done = threading.Event()

    def worker():
        os.sched_setaffinity(0, {min(baseline.affinity)})
        os.setpriority(os.PRIO_PROCESS, 0, baseline.nice + 5)
        pinned.set()
        done.wait(60)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert pinned.wait(60)
        changed = restore(baseline)
        assert any("pinned to CPUs" in c for c in changed) and any("at nice" in c for c in changed), changed
        after = Scheduling.of(thread.native_id)
        assert after.affinity == baseline.affinity
        if os.geteuid() == 0:
            assert after.nice == baseline.nice
            assert restore(baseline) == []
        else:
            assert after.nice == baseline.nice + 5
            again = restore(baseline)
            assert not any("pinned to CPUs" in c for c in again) and any("at nice" in c for c in again), again
    finally:
        done.set()
        thread.join()


@pytest.mark.slow
@pytest.mark.skipif(not TWO_CPUS, reason="needs two CPUs to pin to one")
def test_an_evaluation_whose_evaluator_was_rescheduled_is_refused(tmp_path, fast_config):
    """The attacker is a thread of the test, as a sandbox of the caller's own user would be a process of it:
    once the sandbox is up, it pins the evaluator's main thread to one CPU."""
    from dataclasses import replace

    problem = load_problem(write_problem(tmp_path / "add", VECTOR_ADD, vector_workloads(1000)))
    baseline = Scheduling.of()
    stop = threading.Event()

    def attacker():
        while not stop.is_set():
            if _sandbox_started():
                os.sched_setaffinity(os.getpid(), {min(baseline.affinity)})
            time.sleep(0.01)

    thread = threading.Thread(target=attacker, daemon=True)
    thread.start()
    try:
        traces = evaluate(
            problem, make_solution("def run(x, y):\n    return x + y\n"), replace(fast_config, time_reference=True)
        )
    finally:
        stop.set()
        thread.join()
        restore(baseline)
    evaluation = traces[0].evaluation
    assert evaluation.status is EvaluationStatus.REWARD_HACK, evaluation.solbench.failure
    assert "scheduling" in evaluation.solbench.failure and "pinned to CPUs" in evaluation.solbench.failure


def _sandbox_started() -> bool:
    """Whether this process has a sandbox child running (its own, not another test process's)."""
    for task in os.listdir("/proc/self/task"):
        try:
            children = open(f"/proc/self/task/{task}/children").read().split()
        except OSError:
            continue
        for child in children:
            try:
                if b"solbench.sandbox.child" in open(f"/proc/{child}/cmdline", "rb").read():
                    return True
            except OSError:
                continue
    return False
