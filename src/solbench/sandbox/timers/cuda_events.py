"""CUDA event timer with a device-wide synchronise before the end event.

Recording the end event only after `torch.cuda.synchronize()` means work the call left running
on any stream (a side stream, another thread's launches) finishes inside the measured span. The
price is one host round trip (a few microseconds) per call, which the profiler timer avoids.
"""

from __future__ import annotations


class CudaEventTimer:
    name = "cuda_events"

    def __init__(self, device: str = "cuda"):
        import torch

        self.device = torch.device(device)
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)

    @staticmethod
    def is_available(device: str) -> bool:
        if not device.startswith("cuda"):
            return False
        import torch

        return torch.cuda.is_available()

    def time_call(self, fn) -> float:
        import torch

        torch.cuda.synchronize(self.device)
        self._start.record()
        fn()
        torch.cuda.synchronize(self.device)
        self._end.record()
        self._end.synchronize()
        return self._start.elapsed_time(self._end) * 1e-3
