"""Where a solution's time goes: its calls run again under torch.profiler, untimed, and the top ops are summarised.

Runs in the sandbox on a `ProfileRequest`, which the evaluator sends after the timed loop and only when
an evaluation asks for a profile, so the profiler never runs inside a timed iteration and adds nothing
to a measurement. On a CPU the ops' own CPU time is summed; on a CUDA device their own device time, the
kernels', which is where a GPU solution's time goes. The summary comes from the sandbox (the solution
could write anything there), so it is for the agent's eyes: bounded by the protocol, never scored.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any, Literal

from solbench.sandbox.protocol import Profiled, ProfileRequest, SandboxOpTime

MAX_NAME_CHARS = 200
Activity = Literal["cpu", "cuda"]


def profile_calls(
    request: ProfileRequest,
    invoke: Callable[[], Any],
    prepare: Callable[[int], None],
    device: str,
    adopt_threads: Callable[[Callable[[], Any]], Any],
) -> Profiled:
    """`request.calls` calls of `invoke` on the first loaded input set, under the profiler.

    The inputs are loaded once, before the profiler starts, so the harness's copies are not counted as the
    solution's. `adopt_threads(start)` starts the profiler and takes any thread it starts for the runtime's,
    not the solution's. A solution's failure in a call propagates (it is the solution's result); a profiler
    that cannot run here gives an empty summary with a note.
    """
    from torch.profiler import ProfilerActivity, profile

    cuda = device.startswith("cuda")
    activities = [ProfilerActivity.CPU, *([ProfilerActivity.CUDA] if cuda else [])]
    activity: Activity = "cuda" if cuda else "cpu"
    prepare(0)
    try:
        profiler = profile(activities=activities)
        with _native_stderr_silenced():
            adopt_threads(profiler.start)
    except RuntimeError as error:  # no profiler backend for this device or build
        return Profiled(activity=activity, total_s=0.0, ops=[], note=f"the profiler could not start: {error}"[:500])
    try:
        for _ in range(request.calls):
            invoke()
    finally:
        with _native_stderr_silenced():
            adopt_threads(profiler.stop)
    return _summary(profiler.key_averages(), activity, request.top)


@contextlib.contextmanager
def _native_stderr_silenced():
    """Kineto writes a line to file descriptor 2 as the profiler starts and as it stops; it would land in the
    solution's log (what an agent reads as its candidate's output). Only harness work runs meanwhile."""
    sys.stderr.flush()
    try:
        saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    except OSError:  # no /dev/null in this confinement: the lines stay in the log
        yield
        return
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _summary(averages, activity: Activity, top: int) -> Profiled:
    """The `top` ops by own time (µs in the profiler's events, seconds here)."""
    times = []
    for event in averages:
        own_us = _device_self_us(event) if activity == "cuda" else event.self_cpu_time_total
        if own_us > 0:
            times.append((own_us, event))
    times.sort(key=lambda item: item[0], reverse=True)
    return Profiled(
        activity=activity,
        total_s=sum(own for own, _ in times) / 1e6,
        ops=[
            SandboxOpTime(name=str(event.key)[:MAX_NAME_CHARS], self_s=own / 1e6, calls=int(event.count))
            for own, event in times[:top]
        ],
    )


def _device_self_us(event) -> float:
    """An op's own time on the device: `self_device_time_total` in recent torch, `self_cuda_time_total` before."""
    for name in ("self_device_time_total", "self_cuda_time_total"):
        value = getattr(event, name, None)
        if value is not None:
            return float(value)
    return 0.0
