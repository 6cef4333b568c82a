"""Host timer: a monotonic nanosecond clock around the call."""

from __future__ import annotations

import time


class CpuTimer:
    name = "cpu_monotonic"
    device_kind = "cpu"

    def __init__(self, device: str = "cpu"):
        self.device = device

    @staticmethod
    def is_available(device: str) -> bool:
        return device.startswith("cpu")

    def time_call(self, fn) -> float:
        start = time.perf_counter_ns()
        fn()
        return (time.perf_counter_ns() - start) * 1e-9

    @staticmethod
    def resolution_s() -> float:
        return time.get_clock_info("perf_counter").resolution
