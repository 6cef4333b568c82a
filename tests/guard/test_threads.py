"""The thread guard tells idle threads from working ones.

It wraps the interpreter's thread starters, so each scenario runs in a fresh interpreter.
"""

import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import _thread, functools, os, sys, threading, time, torch
from concurrent.futures import ThreadPoolExecutor
from solbench.guard.threads import ThreadGuard
from solbench.guard.runtime import GuardViolation
guard = ThreadGuard(deadline_s=0.5)

def outcome(check):
    try:
        check()
    except GuardViolation as violation:
        print("refused:", violation)
    else:
        print("accepted")
"""

BUSY_LOOP = """
x = torch.rand(1 << 18)
def spin(seconds):
    scratch = torch.empty_like(x)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        torch.add(x, x, out=scratch)
"""


def run_scenario(*parts: str) -> str:
    script = PRELUDE + "".join(textwrap.dedent(part) for part in parts) + "\nsys.stdout.flush()\nos._exit(0)\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_thread_still_working_after_the_call_is_refused_and_named():
    out = run_scenario(BUSY_LOOP, """
        threading.Thread(target=spin, args=(5,), name="hidden-work", daemon=True).start()
        outcome(lambda: guard.settle("after the call returned"))
    """)
    assert out.startswith("refused:") and "hidden-work" in out and "after the call returned" in out, out


def test_a_thread_waiting_on_a_bare_lock_counts_as_working():
    """Outside the standard waits a futex wait is ambiguous (the GIL, an OpenMP barrier): not idle."""
    out = run_scenario("""
        lock = _thread.allocate_lock()
        lock.acquire()
        threading.Thread(target=lock.acquire, daemon=True).start()
        time.sleep(0.05)
        outcome(lambda: guard.settle("after the call returned"))
    """)
    assert out.startswith("refused:"), out


def test_a_thread_whose_target_is_a_c_function_is_seen():
    out = run_scenario("""
        _thread.start_new_thread(functools.partial(torch.linalg.matrix_power, torch.rand(2048, 2048), 2 ** 40), ())
        time.sleep(0.05)
        outcome(lambda: guard.settle("after the call returned"))
    """)
    assert out.startswith("refused:"), out


def test_work_that_ends_before_the_deadline_is_waited_for():
    out = run_scenario(BUSY_LOOP, """
        threading.Thread(target=spin, args=(0.1,), daemon=True).start()
        started = time.monotonic()
        outcome(lambda: guard.settle("after the call returned"))
        print(f"waited {time.monotonic() - started:.3f}")
    """)
    assert out.startswith("accepted"), out
    assert float(out.split("waited ")[1]) >= 0.05, out


@pytest.mark.parametrize("idle", [
    "pool = ThreadPoolExecutor(2)\nlist(pool.map(abs, range(100)))",
    "event = threading.Event()\nthreading.Thread(target=event.wait, daemon=True).start()",
    "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()",
    "threading.Thread(target=lambda: [time.sleep(0.01) for _ in range(10 ** 6)], daemon=True).start()",
    "reader, _ = os.pipe()\nthreading.Thread(target=os.read, args=(reader, 1), daemon=True).start()",
], ids=["executor-pool", "event-wait", "sleep", "sleeping-loop", "pipe-read"])
def test_idle_threads_are_accepted(idle):
    out = run_scenario(idle, """
time.sleep(0.05)
outcome(lambda: guard.settle("after the call returned"))
outcome(lambda: guard.settle("after the call returned"))
""")
    assert out == "accepted\naccepted\n", out


def test_cpu_time_used_between_calls_is_refused():
    out = run_scenario(BUSY_LOOP, """
        go = threading.Event()
        def worker():
            while True:
                go.wait()
                go.clear()
                spin(0.05)
        threading.Thread(target=worker, daemon=True).start()
        time.sleep(0.05)
        guard.settle("after the call returned")
        outcome(lambda: guard.check_no_work_since_settle("between timed calls"))  # nothing happened yet
        go.set()
        time.sleep(0.2)
        outcome(lambda: guard.check_no_work_since_settle("between timed calls"))
    """)
    lines = out.splitlines()
    assert lines[0] == "accepted", out
    assert lines[1].startswith("refused:") and "between timed calls" in lines[1], out


def test_finished_threads_leave_the_ledger():
    out = run_scenario("""
        worker = threading.Thread(target=sum, args=(range(1000),))
        worker.start()
        worker.join()
        print(len(guard.live))
    """)
    assert out == "0\n", out
