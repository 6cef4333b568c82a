"""Cache flushers: evict the last-level cache between timed iterations so no call runs warm.

The flush size comes from the hardware (the CPU's caches as the OS reports them, the GPU's L2),
doubled so that no replacement policy can keep a useful share of the previous call's data.
"""

from __future__ import annotations

_DEFAULT_CPU_LLC_BYTES = 32 << 20
CPU_FLUSH_CAP_BYTES = 64 << 20
"""Virtual machines may report the whole host's L3 (300 MB here) for a two-vCPU slice whose real
share is about 32 MB; writing twice the reported size before every call would make the flush,
not the kernel, dominate the timing budget. The trace records the bytes actually written."""


def cpu_last_level_cache_bytes() -> int:
    """Largest cache the OS reports for cpu0; a 32 MiB guess where it says nothing."""
    from solbench.hardware.probe import cache_sizes

    return max(cache_sizes().values(), default=_DEFAULT_CPU_LLC_BYTES)


class CpuCacheFlusher:
    """Writes a buffer twice the LLC size: writes evict dirty and clean lines alike."""

    def __init__(self, llc_bytes: int | None = None):
        import torch

        self.bytes = min(2 * (llc_bytes or cpu_last_level_cache_bytes()), CPU_FLUSH_CAP_BYTES)
        self._buffer = torch.empty(self.bytes // 4, dtype=torch.int32)

    def flush(self) -> None:
        self._buffer.add_(1)


class CudaCacheFlusher:
    """Zeroes a device buffer of at least twice the L2 size and drops persisting L2 lines."""

    def __init__(self, device):
        import torch

        l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or (128 << 20)
        self.bytes = max(2 * l2_bytes, 256 << 20)
        self._buffer = torch.empty(self.bytes, dtype=torch.int8, device=device)

    def flush(self) -> None:
        import torch

        try:
            torch.cuda.cudart().cudaCtxResetPersistingL2Cache()
        except (AttributeError, RuntimeError):
            pass
        self._buffer.zero_()


class NoFlush:
    bytes = 0

    def flush(self) -> None:
        pass


def flusher_for(device: str, enabled: bool = True):
    """The flusher a timing loop on `device` uses; NoFlush when flushing is turned off."""
    if not enabled:
        return NoFlush()
    return CudaCacheFlusher(device) if device.startswith("cuda") else CpuCacheFlusher()
