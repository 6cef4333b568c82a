"""Timer backends: each measures one call and returns its duration in seconds.

A backend is a class with `name`, `device_kind` (the kind of device it times: ``cpu`` or ``cuda``),
`is_available(device)` and `time_call(fn) -> float`; the registry below lists them, and
`select_timer` picks one by name or the best for a device.
"""

from __future__ import annotations

from solbench.sandbox.timers.cpu import CpuTimer
from solbench.sandbox.timers.cuda_events import CudaEventTimer
from solbench.sandbox.timers.cuda_profiler import CudaProfilerTimer

TIMERS = {timer.name: timer for timer in (CpuTimer, CudaEventTimer, CudaProfilerTimer)}
DEFAULT_TIMER = {"cpu": CpuTimer.name, "cuda": CudaEventTimer.name}


class TimerUnavailable(Exception):
    pass


def check_timer(name: str | None, device: str | None) -> None:
    """Raise TimerUnavailable when `name` is no timer's name or times another kind of device than `device`
    (None: not known yet, only the name is checked).

    Needs no torch: the parent checks its options with it before any sandbox starts.
    """
    if name is None:
        return
    if name not in TIMERS:
        raise TimerUnavailable(f"unknown timer (known: {', '.join(TIMERS)})")
    if device is None:
        return
    kind = device.split(":")[0]
    if TIMERS[name].device_kind != kind:
        raise TimerUnavailable(
            f"needs a {TIMERS[name].device_kind} device, not {kind} (timers for {kind}: "
            f"{', '.join(n for n, t in TIMERS.items() if t.device_kind == kind)})"
        )


def select_timer(name: str | None, device: str):
    """Instantiate the timer `name` (or the device's default); raises TimerUnavailable."""
    kind = device.split(":")[0]
    chosen = name or DEFAULT_TIMER[kind]
    try:
        check_timer(chosen, device)
    except TimerUnavailable as error:
        raise TimerUnavailable(f"timer {chosen!r}: {error}") from None
    timer = TIMERS[chosen]
    if not timer.is_available(device):
        raise TimerUnavailable(f"timer {chosen!r} cannot time on device {device!r}")
    return timer(device)


__all__ = ["DEFAULT_TIMER", "TIMERS", "TimerUnavailable", "check_timer", "select_timer"]
