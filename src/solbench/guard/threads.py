"""Thread accounting inside the sandbox: work a solution's threads do is timed, or refused.

Every Python thread starts through the interpreter's low-level starters, which are wrapped here
before any solution code runs. The wrapper runs the thread's function inside a Python frame of
its own (so even a thread whose target is a C function stays visible), keeps the set of live
threads and records where each was started, for messages.

Three rules, checked by the sandbox around each call:

- **A thread a call starts is joined before the call returns.** The wrapped starters record every
  thread started while the solution's function runs, and a wrapped ``Thread.join`` records the ones
  the call joined (the join returned with the thread finished). Any other is refused as soon as the
  call returns, whether or not it has finished by then: a thread's finishing races with the return,
  the solution's own join does not, so the verdict is the same on every run. A thread started
  through ``_thread`` cannot be joined, and is refused too. The one exception is a worker of a
  thread pool the solution keeps after the call (a module-level ``ThreadPoolExecutor`` whose
  workers its first call starts): decided once the call's threads are idle, when no worker holds
  the executor any more; a pool the call made and dropped, or shut down without waiting, is not
  kept. The rule holds for threads the solution's own code starts (`solution_folder`): a library's
  (torch.compile's compile workers, tqdm's monitor) are held to the other two rules only.
- **A call ends when its threads are idle.** After the solution's function returns, the sandbox
  waits, inside the timed region, until every thread it did not start itself is idle; one still
  busy after `deadline_s` is refused. Idle means blocked in one of the standard library's waits
  (Condition, Event, Semaphore, Barrier, join, an executor worker waiting for work, a selector),
  or, anywhere else, asleep or waiting for I/O in the kernel (a sleep, a read on a pipe; not
  on a lock, where a busy thread waits for the GIL) and using no CPU time while the sandbox
  sleeps. A standard wait with work pending is not idle, even while the thread has not woken
  yet: a Condition (an Event, a queue.Queue) that notified its waiter, and a ThreadPoolExecutor
  with work submitted that no worker has started (`submit` is wrapped to keep them). Otherwise
  a thread handed work just before the call returned looked idle until it woke, and the work
  ran untimed or not, by chance.
  Idle pools are allowed whoever started them: what matters is whether a thread works.
- **No work between timed calls.** Inputs are loaded and the cache is flushed between timed
  calls, outside the timer. The solution's threads may use no more than a sliver of CPU time
  then (one that polls the input buffers could start on the next result before the timer runs).
  It is counted as the process's CPU time less the runtime's threads', so a thread that works
  and exits meanwhile counts too.

Native threads (``std::thread`` in an extension, torch's inter-op pool behind ``torch.jit.fork``, the
OpenMP pool of a runtime an extension brings) have no Python frame, so they are found by listing
the process's threads: every thread that was not running before the solution was built (the
interpreter's, torch's OpenMP pool, the CUDA driver's; see `start_runtime_threads`) and is not a
Python thread above is a native one. The last two rules hold for them (nothing records their joins), with
idle meaning not runnable and using no CPU time over two short probes: a native thread has no Python wait
to recognise, and a futex is where an idle native pool sleeps. OpenMP runtimes loaded after the sandbox started are
told to sleep at once after a parallel region instead of spinning (`quiet_later_openmp_runtimes`),
so their idle workers cost a call nothing; torch's own pool keeps its default, as in the parent.

The harness's own work between calls runs on the runtime threads only (the flush and the input
copies use torch's pool at no more threads than the sandbox started with, see
`harness_thread_count`), so a solution thread's CPU time there is the solution's.
"""

from __future__ import annotations

import _thread
import concurrent.futures._base
import concurrent.futures.thread
import contextlib
import os
import platform
import selectors
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field

from solbench.guard.runtime import GuardViolation
from solbench.torch_threads import at_most_threads

_STARTERS = (
    ("_thread", "start_new_thread"),
    ("_thread", "start_joinable_thread"),
    ("threading", "_start_new_thread"),
    ("threading", "_start_joinable_thread"),
)
"""Every Python thread starts through one of these; names this interpreter lacks are skipped."""
_MODULES = {"_thread": _thread, "threading": threading}
_SKIPPED_FILES = (threading.__file__, concurrent.futures.thread.__file__, concurrent.futures._base.__file__, __file__)
"""Code a start site is looked for past: threading's, the executors' and this module's wrappers."""
_POOL_WORKER = concurrent.futures.thread._worker
"""A ThreadPoolExecutor's worker function: a thread running it belongs to a pool, which the solution may keep."""

_PROBE_S = 200e-6
_PROBES = 8
"""The sandbox sleeps (releasing the GIL) `_PROBES` times `_PROBE_S` to see whether a thread uses CPU time."""
_NATIVE_PROBE_S, _NATIVE_PROBES = 50e-6, 2
"""Windows when only native threads are probed: short, since an extension's OpenMP pool is probed after every call
it worked in, inside the timer. A busy thread that still looks idle (heavy load) is caught between calls."""
_STILL_S = 20e-6
"""CPU time a blocked thread may show over a probe or since the last check (wake-ups, bookkeeping)."""
_GAP_BUDGET_S = 0.5e-3
"""CPU time a thread may use between two timed calls."""
_TASKS = "/proc/self/task"


def _idle_code_objects() -> frozenset:
    """Code objects of the standard waits, taken now, before a solution could replace the functions."""
    functions = [
        threading.Condition.wait,
        threading.Condition.wait_for,
        threading.Thread.join,
        # A private method, absent from the stubs.
        threading.Thread._wait_for_tstate_lock,  # pyright: ignore[reportAttributeAccessIssue]
        concurrent.futures.thread._worker,
    ]
    functions += [
        cls.select
        for cls in vars(selectors).values()
        if isinstance(cls, type) and issubclass(cls, selectors.BaseSelector) and "select" in vars(cls)
    ]
    return frozenset(function.__code__ for function in functions if hasattr(function, "__code__"))


def _lines_loading(function, attribute: str) -> frozenset[int]:
    """The lines of `function` that load `attribute` (where it calls a method of that name)."""
    import dis

    lines, line = set(), None
    for instruction in dis.get_instructions(function):
        positions = getattr(instruction, "positions", None)  # Python 3.11+; before, only a line's first instruction
        if positions is not None and positions.lineno is not None:
            line = positions.lineno
        elif type(instruction.starts_line) is int:
            line = instruction.starts_line
        if instruction.argval == attribute and line is not None:
            lines.add(line)
    return frozenset(lines)


def _cpu_time_s(native_id: int) -> float | None:
    """CPU time of one thread of this process, or None once it has exited.

    The clock id is Linux's per-thread CPU clock for a thread id (MAKE_THREAD_CPUCLOCK); unlike
    pthread_getcpuclockid it is safe to ask about a thread that has just exited (EINVAL).
    """
    try:
        return time.clock_gettime_ns((~native_id << 3) | 6) * 1e-9
    except OSError:
        return None


def start_runtime_threads(device: str) -> None:
    """Start the threads the runtime keeps for itself, before the guard is made, so it can tell them apart.

    torch's OpenMP pool starts at the first parallel region and the CUDA driver's threads with the
    context; started here, by the harness, they are the runtime's and not a solution's.
    """
    import torch

    size_runtime_pool()
    torch.ones(1 << 20).add_(1)  # above the grain size: wakes the whole pool
    if device.startswith("cuda"):
        torch.ones(1, device=device).add_(1)
        torch.cuda.synchronize(device)


def size_runtime_pool() -> None:
    """Give torch's pool exactly the OMP_NUM_THREADS the evaluator set, the count it computes the reference at.

    torch reads the variable when it loads, but a build with MKL takes MKL's count instead, which MKL caps at the
    physical cores: asked for 16 on 8 cores with SMT, the sandbox ran at 8 while the evaluator ran at 16, and
    low-precision sums split differently. Set before the pool starts, so no worker is started for a solution.
    """
    import torch

    requested = os.environ.get("OMP_NUM_THREADS", "")
    if requested.isdigit() and int(requested) > 0 and torch.get_num_threads() != int(requested):
        torch.set_num_threads(int(requested))


def quiet_later_openmp_runtimes() -> None:
    """Have OpenMP runtimes loaded from now on (an extension's own libgomp/libiomp) sleep as soon as a
    parallel region ends. By default their workers spin for milliseconds, which settling a call would
    have to wait for and time. torch's runtime read its settings when it loaded and keeps spinning."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("KMP_BLOCKTIME", "0")


def quiet_library_monitors() -> None:
    """Keep tqdm from starting its monitor thread, which wakes every 10 s for as long as the process lives.

    torch.compile makes a (disabled) tqdm bar, which starts the monitor; its wake-ups cost about 0.1 ms, more
    under load, and one landing between timed calls was charged to the solution as work done while nothing was
    timed. The monitor only retunes the refresh rate of visible bars. A solution that turns it back on
    (`tqdm.monitor_interval`) owns its wake-ups.
    """
    tqdm_module = sys.modules.get("tqdm.std")  # torch imports tqdm; where it did not, no monitor can start
    if tqdm_module is not None:
        tqdm_module.tqdm.monitor_interval = 0


def harness_thread_count(count: int):
    """Run harness work on torch's pool at no more than `count` threads, and no more than the solution chose.

    With more threads the pool has workers the solution's calls started, and with fewer it has lost some of its
    own (OpenMP ends surplus workers when a smaller team starts); growing it back would start new ones. Either
    way the harness's flush would run on threads that look like the solution's, working between calls.
    """
    return at_most_threads(count)


@dataclass
class _StartedInCall:
    """A thread started while the solution's function ran."""

    thread: threading.Thread | None
    """None for one started through `_thread`, which nothing can join."""
    started_at: str
    pool: weakref.ref | None = None
    """The executor, for a ThreadPoolExecutor's worker."""

    def describe(self) -> str:
        name = self.thread.name if self.thread is not None else "a thread started through _thread"
        return f"{name} (started at {self.started_at})"


@dataclass
class _CallLedger:
    """What the wrapped starters, `Thread.join` and `ThreadPoolExecutor.submit` record for the guard."""

    in_call: bool = False
    """Whether the solution's function is running."""
    own_code: tuple[str, ...] = ("",)
    """Folders of the solution's own code: the join rule holds for a thread started from there. A library's thread
    (torch.compile's compile workers, an autotuning pool it drops) is only held to the other two rules."""
    started: list[_StartedInCall] = field(default_factory=list)
    joined: set[int] = field(default_factory=set)
    """id() of each thread in `started` that the call joined."""
    queued: list = field(default_factory=list)
    """(future, where it was submitted) for work submitted to a ThreadPoolExecutor that may not have started yet."""


@dataclass
class _LiveThread:
    native_id: int
    started_at: str
    still_at: tuple | None = None
    """(code object, instruction offset) where the thread was last found blocked outside the standard waits."""
    cpu_s: float | None = None
    """Its CPU time when it was last found idle."""
    native: bool = False
    """Started by native code: no Python frame, and its idle waits are futexes."""


class ThreadGuard:
    """Keeps the live threads started after it was made, and decides whether they are idle."""

    def __init__(self, deadline_s: float = 1.0):
        self.deadline_s = deadline_s
        self.live: dict[int, _LiveThread] = {}
        """Thread ident -> its record, from the moment it runs until its function returns."""
        self.native: dict[int, _LiveThread] = {}
        """Native thread id -> its record, for threads found running that neither Python nor the runtime started."""
        self._runtime_ids = _task_ids()
        """Threads running when the guard was made: the interpreter's and the runtime's (see start_runtime_threads)."""
        self._runtime_cpu_s = {native_id: _cpu_time_s(native_id) or 0.0 for native_id in self._runtime_ids}
        """CPU time of every runtime thread when last read; exited ones keep their last reading."""
        self._gap: tuple[float, dict[int, float]] | None = None
        """At the start of the harness's work between calls: the solution's CPU time, and each thread's."""
        self._task_count = len(self._runtime_ids)
        self._tasks_fd = os.open(_TASKS, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._idle_codes = _idle_code_objects()
        self._condition_wait = threading.Condition.wait.__code__
        self._pool_wait = (_POOL_WORKER.__code__, _lines_loading(_POOL_WORKER, "get"))
        """A pool worker waits for work at its queue's `get`; elsewhere in the loop it is about to run an item, or
        holds the executor for a moment."""
        self._calls = _CallLedger()
        for module_name, attribute in _STARTERS:
            module = _MODULES[module_name]
            original = getattr(module, attribute, None)
            if original is not None:
                setattr(module, attribute, self._wrap_starter(original))
        threading.Thread.join = _wrap_join(threading.Thread.join, self._calls)
        executor = concurrent.futures.thread.ThreadPoolExecutor
        executor.submit = _wrap_submit(executor.submit, self._calls)

    def _wrap_starter(self, original):
        live, calls = self.live, self._calls

        def start(function, *args, **kwargs):
            filename, started_at = _start_site()
            if calls.in_call and filename.startswith(calls.own_code):
                calls.started.append(_started_in_call(function, started_at))

            def run(*inner_args, **inner_kwargs):
                ident = _thread.get_ident()
                live[ident] = _LiveThread(_thread.get_native_id(), started_at)
                try:
                    return function(*inner_args, **inner_kwargs)
                finally:
                    live.pop(ident, None)

            return original(run, *args, **kwargs)

        return start

    # --- the rules -----------------------------------------------------------------------------
    def solution_folder(self, folder: str) -> None:
        """Threads started from code under `folder` (the solution's sources) are held to the join rule, and no
        others; until this is called, every thread is."""
        self._calls.own_code = tuple({os.path.join(folder, ""), os.path.join(os.path.realpath(folder), "")})

    def call_starts(self) -> None:
        """The solution's function is about to run: threads started from now on are the call's."""
        self._calls.started.clear()
        self._calls.joined.clear()
        self._calls.in_call = True

    def call_raised(self) -> None:
        """The solution's function raised: its threads are not the call's any more (the failure is the result)."""
        self._calls.in_call = False
        self._calls.started.clear()

    def call_returned(self) -> None:
        """The solution's function returned: refuse a thread it started and did not join (a pool's worker is
        decided by `check_kept_pools`, once the call's threads are idle)."""
        calls = self._calls
        calls.in_call = False
        unjoined = [
            started
            for started in calls.started
            if started.pool is None and (started.thread is None or id(started.thread) not in calls.joined)
        ]
        if unjoined:
            self._refuse_unjoined(unjoined)

    def check_kept_pools(self) -> None:
        """After settling: refuse a pool worker the call started unless its pool is kept (the executor lives and is
        not shut down) or the call joined it. Settled, no worker holds the executor, so whether it lives is the
        solution's doing alone; a pool the call made and dropped is gone by now."""
        calls = self._calls
        started, calls.started = calls.started, []
        unjoined = [
            entry
            for entry in started
            if entry.pool is not None and id(entry.thread) not in calls.joined and not _kept(entry.pool())
        ]
        calls.joined.clear()
        if unjoined:
            self._refuse_unjoined(unjoined)

    @staticmethod
    def _refuse_unjoined(unjoined: list[_StartedInCall]) -> None:
        described = "; ".join(entry.describe() for entry in unjoined)
        raise GuardViolation(
            "threads",
            f"thread(s) started during the call and not joined before it returned: "
            f"{described}. Join every thread a call starts (a `with ThreadPoolExecutor()` "
            "block joins its workers), or keep a pool for later calls",
        )

    def settle(self, when: str) -> None:
        """Return once every live thread is idle; refuse the solution if one is still busy at the deadline."""
        if not self.live and not self._calls.queued and self._thread_count_unchanged() and self._natives_still():
            return  # the common case, inside the timed region: one fstat and a clock per native thread
        self._find_native_threads()
        if not self.live and not self.native and not self._queued():
            return
        deadline = time.monotonic() + self.deadline_s
        busy = self._busy()
        while busy and time.monotonic() < deadline:
            busy = self._busy(probe=True)
        if busy:
            described = "; ".join(busy)
            raise GuardViolation(
                "threads",
                f"thread(s) still working {self.deadline_s:g} s {when}: {described}. "
                "Join threads before returning, or leave pools waiting for work",
            )

    def begin_gap(self) -> None:
        """The harness's work between timed calls starts: note the CPU time the solution's threads have used."""
        self._gap = (self._solution_cpu_s(self._find_native_threads())[1], self._cpu_by_thread())

    def check_gap(self, when: str) -> None:
        """Refuse the solution if its threads used more than a sliver of CPU time since `begin_gap`.

        Counted as the process's CPU time less the runtime's threads' (the main thread's included), so a thread
        that worked and exited meanwhile counts too, as does a Python thread after its function returned.
        """
        if self._gap is None:
            raise RuntimeError("check_gap without begin_gap")
        start, by_thread = self._gap
        used = (
            self._solution_cpu_s(self._find_native_threads())[0] - start
        )  # the least it can have been: noise never refuses
        if used <= _GAP_BUDGET_S:
            return
        now = self._cpu_by_thread()
        deltas = sorted(((cpu - by_thread.get(key, 0.0), key) for key, cpu in now.items()), reverse=True)
        records = {**self.live, **self.native}
        named = [
            f"{_describe(key, records[key])} {delta * 1e3:.2f} ms"
            for delta, key in deltas[:3]
            if delta > _STILL_S and key in records
        ]
        raise GuardViolation(
            "threads",
            f"the solution's threads used {used * 1e3:.2f} ms of CPU time {when}, while "
            f"nothing was timed: {'; '.join(named) or 'threads that have exited since'}",
        )

    @contextlib.contextmanager
    def between_calls(self, when: str):
        """Harness work between timed calls, during which the solution's threads must not work."""
        self.begin_gap()
        yield
        self.check_gap(when)

    def _solution_cpu_s(self, ids: set[int]) -> tuple[float, float]:
        """Bounds on the CPU time of every thread the process ever had, less the runtime's (the main thread's,
        torch's pool's).

        The process's clock leaves a thread running on another CPU up to a scheduler tick behind (milliseconds,
        while torch's pool spins after the flush); reading a thread's own clock brings the kernel's count up to
        date. So each runtime thread's clock is read just before the process's and just after: its share of the
        process's clock lies between the two readings. `ids`: the process's threads, as just listed.
        """
        before = {native_id: _cpu_time_s(native_id) for native_id in ids}  # also brings solution threads up to date
        process = time.clock_gettime(time.CLOCK_PROCESS_CPUTIME_ID)
        runtime_before = runtime_after = 0.0
        for native_id in self._runtime_ids:
            earlier = before.get(native_id)
            later = _cpu_time_s(native_id)
            if later is not None:
                self._runtime_cpu_s[native_id] = later
            runtime_before += earlier if earlier is not None else self._runtime_cpu_s.get(native_id, 0.0)
            runtime_after += self._runtime_cpu_s.get(native_id, 0.0)
        exited = sum(cpu for native_id, cpu in self._runtime_cpu_s.items() if native_id not in self._runtime_ids)
        return process - runtime_after - exited, process - runtime_before - exited

    def _cpu_by_thread(self) -> dict[int, float]:
        """CPU time of each Python and native thread of the solution, for naming the ones that worked."""
        readings = {key: _cpu_time_s(thread.native_id) for key, thread in [*self.live.items(), *self.native.items()]}
        return {key: cpu for key, cpu in readings.items() if cpu is not None}

    def adopt_threads_started_by(self, work) -> None:
        """Run harness `work` and take the native threads it starts for the runtime's (a device timer's first
        use starts the profiler's). Called right after settling, so the solution's threads are idle."""
        self._find_native_threads()
        before = _task_ids()
        work()
        self._find_native_threads()
        started = set(self.native) - before
        self._runtime_ids |= started
        self._runtime_cpu_s.update((native_id, 0.0) for native_id in started)
        for native_id in started:
            del self.native[native_id]

    # --- native threads ------------------------------------------------------------------------
    def _thread_count_unchanged(self) -> bool:
        """Whether the process has as many threads as at the last listing. A cheap test, for inside the timer;
        a solution that fools it (closing or replacing the descriptor) only has its threads' work in the call
        counted as work between calls, where the listing is always made."""
        try:
            return os.fstat(self._tasks_fd).st_nlink - 2 == self._task_count
        except OSError:
            return False

    def _natives_still(self) -> bool:
        """Whether every known native thread has used no CPU time since it was last found idle."""
        for native_id, thread in self.native.items():
            now = _cpu_time_s(native_id)
            if thread.cpu_s is None or now is None or now - thread.cpu_s > _STILL_S:
                return False
        return True

    def _find_native_threads(self) -> set[int]:
        """List the process's threads: keep a record per native thread, forget those that exited. Returns the list."""
        ids = _task_ids()
        self._task_count = len(ids)
        self._runtime_ids &= ids  # an exited runtime thread's id may be reused by a solution's thread (its last
        # CPU reading stays in _runtime_cpu_s)
        python_ids = {thread.native_id for thread in list(self.live.values())}
        found = ids - self._runtime_ids - python_ids
        for native_id in list(self.native):
            if native_id not in found:
                del self.native[native_id]
        for native_id in found - self.native.keys():
            self.native[native_id] = _LiveThread(
                native_id, f"native code, thread {native_id} {_name(native_id)!r}", native=True
            )
        return ids

    # --- idleness -----------------------------------------------------------------------------
    def _queued(self) -> list[str]:
        """Work submitted to a ThreadPoolExecutor that no worker has started yet; forgets the rest."""
        queued = self._calls.queued
        queued[:] = [(future, at) for future, at in queued if not (future.running() or future.done())]
        return [f"work submitted at {at}, not started yet" for _, at in queued]

    def _waits_with_nothing_pending(self, frame) -> bool:
        """Whether a thread in a standard wait stays there: a Condition's waiter still waits to be notified (one
        notified, by an Event set or an item put on a queue.Queue, has work to do even before it wakes), and a pool
        worker is at its queue's `get` (work it took but has not started is in `_queued`)."""
        code, lines = self._pool_wait
        if frame.f_code is code:
            return not lines or frame.f_lineno in lines
        if frame.f_code is not self._condition_wait:
            return True
        local = frame.f_locals
        condition, waiter = local.get("self"), local.get("waiter")
        return waiter is not None and waiter in getattr(condition, "_waiters", ())

    def _busy(self, probe: bool = False) -> list[str]:
        frames = sys._current_frames()
        candidates = []
        queued = self._queued()
        for ident, thread in list(self.live.items()):
            frame = frames.get(ident)
            if frame is None:
                continue  # finishing: its function has returned
            if frame.f_code in self._idle_codes and self._waits_with_nothing_pending(frame):
                thread.cpu_s, thread.still_at = _cpu_time_s(thread.native_id), None
                continue
            position = (frame.f_code, frame.f_lasti)
            now = _cpu_time_s(thread.native_id)
            if now is None:
                continue
            if position == thread.still_at and thread.cpu_s is not None and now - thread.cpu_s <= _STILL_S:
                continue  # blocked at the same place since it was last seen, and used no CPU time
            candidates.append((ident, thread, frame, position, now))
        for native_id, thread in list(self.native.items()):
            now = _cpu_time_s(native_id)
            if now is None:
                continue
            if thread.cpu_s is not None and now - thread.cpu_s <= _STILL_S:
                continue  # asleep since it was last seen, and used no CPU time
            candidates.append((native_id, thread, None, None, now))
        if not candidates or not probe:
            if queued and probe:
                time.sleep(_PROBE_S)  # give the pool's workers the GIL to start on it
            return queued + [_describe(ident, thread, frame) for ident, thread, frame, _, _ in candidates]
        return queued + self._probe(candidates)

    @staticmethod
    def _probe(candidates: list) -> list[str]:
        """Sleep in short windows, releasing the GIL; a thread is still if it never ran nor used CPU time in any.

        Several windows, because a busy thread waiting for the GIL on a loaded machine can look still in one;
        native threads do not wait for the GIL (one that is starved is runnable), so fewer decide them.
        """
        last = {ident: cpu for ident, _, _, _, cpu in candidates}
        moving: set[int] = set()
        native_only = all(thread.native for _, thread, _, _, _ in candidates)
        windows, window_s = (_NATIVE_PROBES, _NATIVE_PROBE_S) if native_only else (_PROBES, _PROBE_S)
        for _ in range(windows):
            time.sleep(window_s)
            for ident, thread, _, _, _ in candidates:
                if ident in moving:
                    continue
                now = _cpu_time_s(thread.native_id)
                if now is not None and (
                    now - last[ident] > _STILL_S
                    or _runnable(thread.native_id)
                    or (not thread.native and _waits_on_a_lock(thread.native_id))
                ):
                    moving.add(ident)
                last[ident] = now if now is not None else last[ident]
            if len(moving) == len(candidates):
                break
        for ident, thread, _, position, _ in candidates:
            if ident not in moving:
                thread.cpu_s, thread.still_at = last[ident], position
        return [_describe(ident, thread, frame) for ident, thread, frame, _, _ in candidates if ident in moving]


def _started_in_call(function, started_at: str) -> _StartedInCall:
    """The record of a thread a call starts: `function` is a Thread's bootstrap method, or what `_thread` runs."""
    thread = getattr(function, "__self__", None)
    if not isinstance(thread, threading.Thread):
        return _StartedInCall(None, started_at)
    pool = None
    if getattr(thread, "_target", None) is _POOL_WORKER:
        pool = next((arg for arg in getattr(thread, "_args", ()) if isinstance(arg, weakref.ReferenceType)), None)
    return _StartedInCall(thread, started_at, pool)


def _kept(executor) -> bool:
    """Whether a pool stays open for later calls: the executor lives and was not shut down."""
    return executor is not None and not getattr(executor, "_shutdown", False)


def _wrap_join(original, calls: _CallLedger):
    is_alive = threading.Thread.is_alive  # the class's own: a subclass cannot claim a running thread has ended

    def join(self: threading.Thread, timeout: float | None = None) -> None:  # installed as Thread.join
        original(self, timeout)
        if calls.in_call and not is_alive(self):
            calls.joined.add(id(self))

    join.__name__, join.__qualname__, join.__doc__ = original.__name__, original.__qualname__, original.__doc__
    return join


def _wrap_submit(original, calls: _CallLedger):
    def submit(executor, fn, /, *args, **kwargs):
        future = original(executor, fn, *args, **kwargs)
        calls.queued.append((future, _start_site()[1]))
        return future

    submit.__name__, submit.__qualname__, submit.__doc__ = original.__name__, original.__qualname__, original.__doc__
    return submit


def _runnable(native_id: int) -> bool:
    """Whether the scheduler has the thread running or waiting for a CPU (a busy thread starved by load looks
    like a still one by its CPU time alone); a thread blocked in the kernel is sleeping instead."""
    try:
        with open(f"/proc/self/task/{native_id}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] == b"R"
    except (OSError, IndexError):
        return False


_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine())
"""The futex system call: where a thread waits for a lock, the GIL or an OpenMP barrier."""


def _waits_on_a_lock(native_id: int) -> bool:
    """Whether the thread is blocked on a futex. Outside the standard waits that is ambiguous: a busy thread
    waits there for the GIL, or for the OpenMP helpers doing its work at a barrier, so it counts as working;
    asleep (`time.sleep`) or waiting for I/O (a pipe, a socket) is idle."""
    if _FUTEX is None:
        return False
    try:
        with open(f"/proc/self/task/{native_id}/syscall", "rb") as syscall:
            first = syscall.read().split(maxsplit=1)[0]
    except (OSError, IndexError):
        return False
    return first == b"running" or (first.isdigit() and int(first) == _FUTEX)


def _task_ids() -> set[int]:
    return {int(name) for name in os.listdir(_TASKS)}


def _name(native_id: int) -> str:
    try:
        with open(f"{_TASKS}/{native_id}/comm") as comm:
            return comm.read().strip()
    except OSError:
        return "?"


def _describe(ident: int, thread: _LiveThread, frame=None) -> str:
    if thread.native:
        return thread.started_at
    named = threading._active.get(ident)  # pyright: ignore[reportAttributeAccessIssue]  # private, not in the stubs
    text = f"{named.name if named is not None else f'thread {ident}'} (started at {thread.started_at}"
    if frame is not None:
        text += f", now at {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
    return text + ")"


def _start_site() -> tuple[str, str]:
    """Where the caller of a wrapper (a thread starter, `submit`) was called from, outside threading and executors:
    the file, and the file and line."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename in _SKIPPED_FILES:
        frame = frame.f_back
    if frame is None:
        return "", "unknown"
    return frame.f_code.co_filename, f"{frame.f_code.co_filename}:{frame.f_lineno}"
