"""CUDA event timer with a device-wide synchronise before the end event.

Recording the end event only after `torch.cuda.synchronize()` means work the call left running
on any stream (a side stream, another thread's launches) finishes inside the measured span. The
price is one host round trip (a few microseconds) per call, which the profiler timer avoids.
"""

from __future__ import annotations

from solbench.sandbox.timers.cuda_base import CudaTimerBase


class CudaEventTimer(CudaTimerBase):
    name = "cuda_events"

    def __init__(self, device: str = "cuda"):
        import torch

        super().__init__(device)
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)

    def time_call(self, fn) -> float:
        import torch

        torch.cuda.synchronize(self.device)
        self._start.record()
        fn()
        torch.cuda.synchronize(self.device)
        self._end.record()
        self._end.synchronize()
        return self._start.elapsed_time(self._end) * 1e-3

    @staticmethod
    def resolution_s() -> float:
        """cudaEventElapsedTime: "a resolution of around 0.5 microseconds" (CUDA Runtime API)."""
        return 0.5e-6
