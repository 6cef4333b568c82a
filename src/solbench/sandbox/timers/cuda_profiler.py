"""Kernel-time timer through the PyTorch profiler (CUPTI underneath).

Each call runs inside a profiler session; its time is the span from the first device activity's
start to the last one's end, on any stream. This excludes launch overhead, which is what a kernel
engineer compares against T_SOL, and it still counts every kernel the call caused.
"""

from __future__ import annotations

from solbench.sandbox.timers.cuda_base import CudaTimerBase


class CudaProfilerTimer(CudaTimerBase):
    name = "cuda_profiler"

    def time_call(self, fn) -> float:
        import torch
        from torch.profiler import ProfilerActivity, profile

        torch.cuda.synchronize(self.device)
        with profile(activities=[ProfilerActivity.CUDA]) as session:
            fn()
            torch.cuda.synchronize(self.device)
        events = session.events()
        assert events is not None, "the profile has stopped, so its events are parsed"
        # DeviceType is public in torch.autograd but not re-exported by its stubs.
        cuda = torch.autograd.DeviceType.CUDA  # pyright: ignore[reportPrivateImportUsage]
        spans = [(e.time_range.start, e.time_range.end) for e in events if e.device_type == cuda]
        if not spans:
            raise RuntimeError("the call launched no device work for the profiler to time")
        return (max(end for _, end in spans) - min(start for start, _ in spans)) * 1e-6
