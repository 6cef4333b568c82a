"""Timer backends: each measures one call and returns its duration in seconds.

A backend is a class with `name`, `is_available(device)` and `time_call(fn) -> float`; the
registry below lists them, and `select_timer` picks one by name or the best for a device.
"""

from __future__ import annotations

from solbench.sandbox.timers.cpu import CpuTimer
from solbench.sandbox.timers.cuda_events import CudaEventTimer
from solbench.sandbox.timers.cuda_profiler import CudaProfilerTimer

TIMERS = {timer.name: timer for timer in (CpuTimer, CudaEventTimer, CudaProfilerTimer)}
DEFAULT_TIMER = {"cpu": CpuTimer.name, "cuda": CudaEventTimer.name}


class TimerUnavailable(Exception):
    pass


def select_timer(name: str | None, device: str):
    """Instantiate the timer `name` (or the device's default); raises TimerUnavailable."""
    kind = device.split(":")[0]
    chosen = name or DEFAULT_TIMER[kind]
    if chosen not in TIMERS:
        raise TimerUnavailable(f"unknown timer {chosen!r} (known: {', '.join(TIMERS)})")
    timer = TIMERS[chosen]
    if not timer.is_available(device):
        raise TimerUnavailable(f"timer {chosen!r} cannot time on device {device!r}")
    return timer(device)


__all__ = ["DEFAULT_TIMER", "TIMERS", "TimerUnavailable", "select_timer"]
