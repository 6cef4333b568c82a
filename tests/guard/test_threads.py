"""The thread guard tells idle threads from working ones, and refuses a thread a call starts and does not join.

It wraps the interpreter's thread starters, so each scenario runs in a fresh interpreter. The machine running
these may be loaded, and a thread may run long after it was started: scenarios wait for events (with generous
bounds) rather than for time to pass, work is a fixed amount or lasts until told to stop, and a settle that
must accept has a deadline long enough for a late thread to reach its wait.
"""

import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from conftest import VECTOR_ADD, make_solution, vector_workloads, write_problem

pytestmark = pytest.mark.slow  # every scenario starts a fresh interpreter with torch

PRELUDE = """
import _thread, functools, os, sys, threading, time, torch
from concurrent.futures import ThreadPoolExecutor
from solbench.guard.threads import ThreadGuard, harness_thread_count, start_runtime_threads
from solbench.guard.runtime import GuardViolation
start_runtime_threads("cpu")  # as the sandbox does: torch's pool belongs to the runtime
guard = ThreadGuard(deadline_s=0.5)
PATIENT_S = 60.0  # a settle deadline for threads that are idle once they reach their wait, whenever they run

def wait_for(condition, what, timeout_s=60.0):
    # poll until condition() holds; on a timeout the scenario did not get going, which the test reports
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            print("timed out waiting for", what)
            sys.stdout.flush()
            os._exit(3)
        time.sleep(0.002)

def blocked(thread):
    # whether a thread is asleep in the kernel (state S in /proc): it reached a wait
    with open(f"/proc/self/task/{thread.native_id}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "S"

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
def work(rounds):
    # a fixed amount of CPU work (milliseconds), however loaded the machine is
    scratch = torch.empty_like(x)
    for _ in range(rounds):
        torch.add(x, x, out=scratch)
def work_until(stop):
    # CPU work until told to stop: busy for as long as the scenario needs, however late it runs
    scratch = torch.empty_like(x)
    while not stop.is_set():
        torch.add(x, x, out=scratch)
"""


def run_scenario(*parts: str) -> str:
    script = PRELUDE + "".join(textwrap.dedent(part) for part in parts) + "\nsys.stdout.flush()\nos._exit(0)\n"
    with tempfile.TemporaryDirectory() as folder:  # a file, not -c: TorchScript reads the source
        path = Path(folder, "scenario.py")
        path.write_text(script)
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_thread_still_working_after_the_call_is_refused_and_named():
    out = run_scenario(
        BUSY_LOOP,
        """
        threading.Thread(target=work_until, args=(threading.Event(),), name="hidden-work", daemon=True).start()
        outcome(lambda: guard.settle("after the call returned"))
    """,
    )
    assert out.startswith("refused:") and "hidden-work" in out and "after the call returned" in out, out


def test_a_thread_waiting_on_a_bare_lock_counts_as_working():
    """Outside the standard waits a futex wait is ambiguous (the GIL, an OpenMP barrier): not idle."""
    out = run_scenario("""
        lock = _thread.allocate_lock()
        lock.acquire()
        waiter = threading.Thread(target=lock.acquire, daemon=True)
        waiter.start()
        wait_for(lambda: blocked(waiter), "the thread to wait on the lock")
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
    """The thread is still working when the guard first looks (it works until then), then does a fixed amount more:
    settle returns only once that is done."""
    out = run_scenario(
        BUSY_LOOP,
        """
        looking, finished = threading.Event(), threading.Event()
        busy = guard._busy
        def watched_busy(probe=False):
            looking.set()
            return busy(probe)
        guard._busy = watched_busy
        def worker():
            work_until(looking)
            work(50)
            finished.set()
        threading.Thread(target=worker, daemon=True).start()
        guard.deadline_s = PATIENT_S
        outcome(lambda: guard.settle("after the call returned"))
        print("finished" if finished.is_set() else "returned while the thread worked")
    """,
    )
    assert out == "accepted\nfinished\n", out


@pytest.mark.parametrize(
    "idle",
    [
        "pool = ThreadPoolExecutor(2)\nlist(pool.map(abs, range(100)))",
        "event = threading.Event()\nthreading.Thread(target=event.wait, daemon=True).start()",
        "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()",
        "threading.Thread(target=lambda: [time.sleep(0.01) for _ in range(10 ** 6)], daemon=True).start()",
        "reader, _ = os.pipe()\nthreading.Thread(target=os.read, args=(reader, 1), daemon=True).start()",
    ],
    ids=["executor-pool", "event-wait", "sleep", "sleeping-loop", "pipe-read"],
)
def test_idle_threads_are_accepted(idle):
    """Accepted once they reach their wait (however late they run), and then at once, at the usual deadline."""
    out = run_scenario(
        idle,
        """
guard.deadline_s = PATIENT_S
outcome(lambda: guard.settle("after the call returned"))
guard.deadline_s = 0.5
outcome(lambda: guard.settle("after the call returned"))
""",
    )
    assert out == "accepted\naccepted\n", out


def test_cpu_time_used_between_calls_is_refused():
    out = run_scenario(
        BUSY_LOOP,
        """
        go, done = threading.Event(), threading.Event()
        def worker():
            go.wait()
            work(400)  # tens of milliseconds of CPU time: far above the gap's budget
            done.set()
        threading.Thread(target=worker, daemon=True).start()
        guard.deadline_s = PATIENT_S
        guard.settle("after the call returned")  # returns once the worker waits for go
        guard.begin_gap()
        outcome(lambda: guard.check_gap("between timed calls"))  # nothing happened yet
        go.set()
        wait_for(done.is_set, "the worker's work")
        outcome(lambda: guard.check_gap("between timed calls"))
    """,
    )
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


NATIVE_WORK = """
# torch.jit.fork runs these on torch's native inter-op pool: threads with no Python frame
@torch.jit.script
def work(x: torch.Tensor, rounds: int) -> int:
    for _ in range(rounds):
        x.mul_(1.0001)
    return 0

@torch.jit.script
def launch(x: torch.Tensor, rounds: int) -> torch.jit.Future[int]:
    return torch.jit.fork(work, x, rounds)

@torch.jit.script
def counted_work(x: torch.Tensor, count: torch.Tensor, rounds: int) -> int:
    for _ in range(rounds):
        x.mul_(1.0001)
        count.add_(1)
    return 0

@torch.jit.script
def launch_counted(x: torch.Tensor, count: torch.Tensor, rounds: int) -> torch.jit.Future[int]:
    return torch.jit.fork(counted_work, x, count, rounds)

@torch.jit.script
def work_after(go: torch.jit.Future[torch.Tensor], x: torch.Tensor, started: torch.Tensor) -> int:
    started.fill_(1)
    torch.jit.wait(go)
    return work(x, 2000)

@torch.jit.script
def launch_after(go: torch.jit.Future[torch.Tensor], x: torch.Tensor, started: torch.Tensor) -> torch.jit.Future[int]:
    return torch.jit.fork(work_after, go, x, started)
"""


def test_a_native_thread_still_working_after_the_call_is_refused():
    """Refused when the call is settled; under heavy load a busy native thread can look idle over the short
    probe, and is then refused between calls, where its CPU time is counted."""
    out = run_scenario(
        NATIVE_WORK,
        """
        count = torch.zeros((), dtype=torch.int64)
        task = launch_counted(torch.rand(1 << 16) + 0.5, count, 10 ** 9)
        wait_for(lambda: int(count) > 0, "the native thread to start working")
        def settle_then_gap():
            guard.settle("after the call returned")
            guard.begin_gap()
            worked = int(count)
            wait_for(lambda: int(count) > worked + 1000, "the native thread to work between calls")
            guard.check_gap("between timed calls")
        outcome(settle_then_gap)
    """,
    )
    assert out.startswith("refused:") and ("PTThreadPool" in out or "threads used" in out), out


def test_native_threads_that_worked_and_went_idle_are_accepted():
    """torch's inter-op pool stays behind after a finished fork: idle native threads cost nothing."""
    out = run_scenario(
        NATIVE_WORK,
        """
        launch(torch.rand(1 << 16), 2000).wait()
        guard.deadline_s = PATIENT_S  # the pool's threads go back to waiting whenever the machine runs them
        outcome(lambda: guard.settle("after the call returned"))
        guard.deadline_s = 0.5
        print(len(guard.native))
        guard.begin_gap()
        time.sleep(0.05)
        outcome(lambda: guard.check_gap("between timed calls"))
        outcome(lambda: guard.settle("after the call returned"))
    """,
    )
    lines = out.splitlines()
    assert lines[0] == "accepted" and int(lines[1]) > 0 and lines[2:] == ["accepted", "accepted"], out


def test_a_native_thread_working_between_calls_is_refused():
    out = run_scenario(
        NATIVE_WORK,
        """
        go = torch.futures.Future()
        started = torch.zeros(())
        task = launch_after(go, torch.rand(1 << 16), started)
        wait_for(lambda: bool(started), "the native thread to start")
        guard.deadline_s = PATIENT_S
        guard.settle("after the call returned")  # returns once it waits for go
        guard.begin_gap()
        outcome(lambda: guard.check_gap("between timed calls"))  # waiting: idle
        go.set_result(torch.ones(1))  # wakes it, while nothing is timed
        task.wait()  # its 2000 rounds are done
        outcome(lambda: guard.check_gap("between timed calls"))
    """,
    )
    lines = out.splitlines()
    assert lines[0] == "accepted", out
    assert lines[1].startswith("refused:") and "native code" in lines[1] and "between timed calls" in lines[1], out


def test_work_by_threads_that_exit_before_the_check_still_counts():
    """A relay of short-lived threads, each doing a little and exiting: none is alive to be asked, yet their CPU
    time is the process's."""
    out = run_scenario(
        BUSY_LOOP,
        """
        guard.settle("after the call returned")
        guard.begin_gap()
        def share():  # a fixed amount of work (a few ms of CPU time), however loaded the machine is
            scratch = torch.empty_like(x)
            for _ in range(20):
                torch.add(x, x, out=scratch)

        for _ in range(8):
            relay = threading.Thread(target=share)
            relay.start()
            relay.join()
        outcome(lambda: guard.check_gap("between timed calls"))
    """,
    )
    assert out.startswith("refused:") and "between timed calls" in out, out


def test_a_python_thread_working_after_its_function_returned_is_counted():
    """What a thread's function returns is dropped after the guard's record of the thread is gone: a `__del__`
    there runs in a thread the guard no longer lists as Python's."""
    out = run_scenario(
        BUSY_LOOP,
        """
        returned, gap_started, done = threading.Event(), threading.Event(), threading.Event()
        class Afterlife:
            def __del__(self):
                returned.set()
                gap_started.wait()  # idle while the harness settles
                work(400)
                done.set()

        _thread.start_new_thread(Afterlife, ())
        wait_for(returned.is_set, "the thread's function to return")
        guard.deadline_s = PATIENT_S
        outcome(lambda: guard.settle("after the call returned"))
        guard.begin_gap()
        gap_started.set()
        wait_for(done.is_set, "the work after the function returned")
        outcome(lambda: guard.check_gap("between timed calls"))
    """,
    )
    assert out.splitlines()[-1].startswith("refused:"), out


def test_more_torch_threads_than_the_harness_uses_stay_out_of_its_work():
    """A solution that raises torch's thread count starts pool workers of its own; the harness's work
    between calls runs at the sandbox's count, so they stay idle then."""
    out = run_scenario("""
        count = torch.get_num_threads()
        torch.set_num_threads(count + 3)
        torch.rand(1 << 22).mul_(2)  # the call: new workers join the pool
        guard.deadline_s = PATIENT_S  # they spin a while after the call, then wait, whenever the machine runs them
        outcome(lambda: guard.settle("after the call returned"))
        guard.begin_gap()
        with harness_thread_count(count):
            for _ in range(20):
                torch.ones(1 << 22).add_(1)  # the flush
        outcome(lambda: guard.check_gap("between timed calls"))
        print(torch.get_num_threads() == count + 3)
    """)
    assert out == "accepted\naccepted\nTrue\n", out


def test_fewer_torch_threads_keep_the_harness_off_new_workers():
    """A solution that lowers torch's thread count shrinks the pool (OpenMP ends surplus workers when a smaller
    team starts); the harness's work between calls stays at the lower count, since growing the pool back would
    start workers that look like the solution's."""
    out = run_scenario("""
        torch.set_num_threads(4)
        torch.ones(1 << 22).add_(1)
        sandbox_guard = ThreadGuard(deadline_s=PATIENT_S)  # as a sandbox started with a pool of 4 would
        torch.set_num_threads(2)
        torch.rand(1 << 22).mul_(2)  # the call, on a team of 2
        outcome(lambda: sandbox_guard.settle("after the call returned"))
        sandbox_guard.begin_gap()
        with harness_thread_count(4):
            for _ in range(20):
                torch.ones(1 << 22).add_(1)  # the flush
        outcome(lambda: sandbox_guard.check_gap("between timed calls"))
        print(torch.get_num_threads())
    """)
    assert out == "accepted\naccepted\n2\n", out


# --- the join rule: a thread a call starts is joined before the call returns --------------------------------------

CALL = """
def call(start):
    # as the sandbox runs a call: the solution's function, then the checks once it returned
    guard.call_starts()
    start()
    guard.call_returned()
    guard.deadline_s = PATIENT_S
    guard.settle("after the call returned")
    guard.check_kept_pools()
"""


@pytest.mark.parametrize(
    "unjoined, name",
    [
        (
            "worker = threading.Thread(target=sum, args=(range(10),), name='quick-work')\nworker.start()\n"
            "wait_for(lambda: not worker.is_alive(), 'the thread to end')",
            "quick-work",
        ),
        (
            "done = ThreadPoolExecutor(1, thread_name_prefix='fire-and-forget').submit(sum, range(10))\n"
            "wait_for(done.done, 'the work to end')",
            "fire-and-forget_0",
        ),
        (
            "ended = _thread.allocate_lock()\nended.acquire()\n_thread.start_new_thread(ended.release, ())\n"
            "wait_for(lambda: not ended.locked(), 'the thread to end')",
            "a thread started through _thread",
        ),
        (
            "pool = ThreadPoolExecutor(1, thread_name_prefix='dropped')\npool.submit(sum, range(10)).result()\n"
            "pool.shutdown(wait=False)",
            "dropped_0",
        ),
    ],
    ids=["thread", "fire-and-forget-executor", "raw-thread", "pool-shut-down-without-waiting"],
)
def test_a_thread_a_call_starts_and_does_not_join_is_refused_even_once_it_ended(unjoined, name):
    """Its work is done before the call returns (the case a liveness check races with), and it is refused anyway,
    named, with where it was started."""
    out = run_scenario(
        CALL,
        f"""
def start():
{textwrap.indent(unjoined, "    ")}
outcome(lambda: call(start))
""",
    )
    assert out.startswith("refused:") and "not joined" in out and name in out and "scenario.py:" in out, out


@pytest.mark.parametrize(
    "joined",
    [
        "workers = [threading.Thread(target=sum, args=(range(10),)) for _ in range(2)]\n"
        "[worker.start() for worker in workers]\n[worker.join() for worker in workers]",
        "with ThreadPoolExecutor(2) as pool:\n    list(pool.map(abs, range(100)))",
        "list(KEPT.map(abs, range(100)))  # the pool's workers start in this call, and stay for later ones",
        "KEPT.submit(sum, range(10))  # fire and forget, to a pool started before: its work is timed instead",
    ],
    ids=["threads-joined", "executor-with-block", "kept-pool-started-in-the-call", "work-for-a-kept-pool"],
)
def test_a_call_that_joins_its_threads_is_accepted(joined):
    out = run_scenario(
        CALL,
        f"""
KEPT = ThreadPoolExecutor(2)
def start():
{textwrap.indent(joined, "    ")}
outcome(lambda: call(start))
outcome(lambda: call(lambda: None))  # and the next call, which starts nothing
""",
    )
    assert out == "accepted\naccepted\n", out


def test_threads_a_library_starts_are_not_held_to_the_join_rule():
    """Only the solution's own code is (torch.compile starts compile workers and tqdm its monitor, in the first call):
    a library's threads are held to the other rules."""
    out = run_scenario(
        CALL,
        """
        guard.solution_folder(os.path.join(os.path.dirname(__file__), "solution"))  # not where this file is
        outcome(lambda: call(lambda: threading.Thread(target=sum, args=(range(10),)).start()))
        guard.solution_folder(os.path.dirname(__file__))
        outcome(lambda: call(lambda: threading.Thread(target=sum, args=(range(10),)).start()))
    """,
    )
    lines = out.splitlines()
    assert lines[0] == "accepted" and lines[1].startswith("refused:"), out


# --- work handed to a waiting thread is pending, even before the thread wakes -------------------------------------


def test_work_queued_for_a_pool_is_waited_for():
    """The pool's one worker waits inside an item (a standard wait) while the next item is queued: the queue is not
    idle. Before, settling returned at once and the queued work ran after it, untimed."""
    out = run_scenario("""
        pool = ThreadPoolExecutor(1)
        gate, finished = threading.Event(), threading.Event()
        first = pool.submit(gate.wait)
        wait_for(first.running, "the first item to start")
        pool.submit(finished.set)  # queued behind the first
        threading.Timer(0.2, gate.set).start()
        guard.deadline_s = PATIENT_S
        outcome(lambda: guard.settle("after the call returned"))
        print("finished" if finished.is_set() else "returned while work was queued")
    """)
    assert out == "accepted\nfinished\n", out


def test_a_notified_waiter_is_not_idle_before_it_wakes():
    """A Condition's waiter that was notified has work to do, though it still sits in Condition.wait: here it cannot
    wake (the condition's lock is held) until the deadline has passed."""
    out = run_scenario("""
        condition, waiting = threading.Condition(), threading.Event()
        def waiter():
            with condition:
                waiting.set()
                condition.wait()
        thread = threading.Thread(target=waiter, name="notified", daemon=True)
        thread.start()
        wait_for(lambda: waiting.is_set() and blocked(thread), "the waiter to wait")
        outcome(lambda: guard.settle("after the call returned"))  # waiting, not notified: idle
        with condition:
            condition.notify()
            outcome(lambda: guard.settle("after the call returned"))
        guard.deadline_s = PATIENT_S
        outcome(lambda: guard.settle("after the call returned"))  # it woke and ended
    """)
    lines = out.splitlines()
    assert lines[0] == "accepted" and lines[2] == "accepted", out
    assert lines[1].startswith("refused:") and "notified" in lines[1], out


# --- through the real evaluator -----------------------------------------------------------------------------------

FIRE_AND_FORGET = """
import torch
from concurrent.futures import ThreadPoolExecutor
def run(x, y):
    z = torch.empty_like(x)
    ThreadPoolExecutor(1).submit(torch.add, x, y, out=z)  # a few microseconds of work, never waited for
    return z
"""

JOINED = """
import torch
from concurrent.futures import ThreadPoolExecutor
def run(x, y):
    z = torch.empty_like(x)
    with ThreadPoolExecutor(1) as pool:  # shut down with wait: joins its worker
        pool.submit(torch.add, x, y, out=z)
    return z
"""


def _evaluate(tmp_path, fast_config, source: str):
    from dataclasses import replace

    from solbench.evaluation import evaluate
    from solbench.spec import load_problem

    problem = load_problem(write_problem(tmp_path / "vector_add", VECTOR_ADD, vector_workloads(1000, 4096)))
    return evaluate(problem, make_solution(source), replace(fast_config, static_check=False))


def test_fire_and_forget_executor_work_is_refused_on_every_run(tmp_path, fast_config):
    """Before, the verdict depended on when the pool's thread ran against the guard's checks (an agent-side probe was
    refused in 4 runs of 5 and rewarded in the fifth); the thread the call did not join is refused whatever it did."""
    for run in range(5):
        traces = _evaluate(tmp_path / str(run), fast_config, FIRE_AND_FORGET)
        verdicts = [(t.evaluation.status.value, t.evaluation.solbench.failed_rule) for t in traces]
        assert verdicts == [("REWARD_HACK", "threads")] * len(traces), (run, verdicts)
        failure = traces[0].evaluation.solbench.failure
        assert "not joined" in failure and "ThreadPoolExecutor-" in failure and "kernel.py:6" in failure, failure


def test_an_executor_joined_before_the_call_returns_passes(tmp_path, fast_config):
    traces = _evaluate(tmp_path, fast_config, JOINED)
    assert {t.evaluation.status.value for t in traces} == {"PASSED"}, traces[0].evaluation.solbench.failure
