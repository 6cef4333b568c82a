"""Cache flushers: evict the caches between timed iterations so no call finds its data warm.

Three kinds, each naming itself in `mode` (recorded in every trace's timing):

- ``operands`` (the CPU default): the native helper (line_flush.py) flushes every cache line of
  the buffers the call reads and writes (the inputs, DPS output buffers and the previous call's
  outputs, whose memory the allocator tends to hand back) and fences. Data is cold, the
  interpreter's and dispatcher's code stays warm, as it does on a GPU after an L2 flush.
- ``stream``: writes a buffer of twice the last-level cache (capped at 64 MiB), which evicts
  code and data alike; the size comes from the hardware, doubled so that no replacement policy
  can keep a useful share of the previous call's data.
- ``l2`` (CUDA): zeroes a device buffer of at least twice the L2.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from solbench.sandbox.line_flush import tensor_ranges

_DEFAULT_CPU_LLC_BYTES = 32 << 20
CPU_FLUSH_CAP_BYTES = 64 << 20
"""Virtual machines may report the whole host's L3 (300 MB here) for a two-vCPU slice whose real
share is about 32 MB; writing twice the reported size before every call would make the flush,
not the kernel, dominate the timing budget. The trace records the bytes actually written."""


def cpu_last_level_cache_bytes() -> int:
    """Largest cache the OS reports for cpu0; a 32 MiB guess where it says nothing."""
    from solbench.hardware.probe import cache_sizes

    return max(cache_sizes().values(), default=_DEFAULT_CPU_LLC_BYTES)


CPU_FLUSH_MODES = ("operands", "stream")
"""How a CPU timing loop flushes (EvaluationConfig.cpu_flush); the first is the default."""


class CpuCacheFlusher:
    """Writes a buffer twice the LLC size: writes evict dirty and clean lines alike."""

    mode = "stream"

    def __init__(self, llc_bytes: int | None = None, note: str | None = None):
        import torch

        self.note = note
        """Why this flusher runs instead of the one asked for (the operand flush's helper is missing), or None."""
        self.bytes = min(2 * (llc_bytes or cpu_last_level_cache_bytes()), CPU_FLUSH_CAP_BYTES)
        self._buffer = torch.empty(self.bytes // 4, dtype=torch.int32)

    def flush(self) -> None:
        self._buffer.add_(1)


class OperandCacheFlusher:
    """Flushes every cache line of the buffers the timed call reads and writes, with the native helper.

    `operands()` returns them at each flush (tensors; other values are skipped): only buffers that
    exist can be flushed, so a value-returning call's fresh output is not among them, but the
    previous call's outputs are. `bytes` is the size of the last flush's ranges.
    """

    mode = "operands"
    note = None

    def __init__(self, operands: Callable[[], Iterable], helper):
        self._operands = operands
        self._helper = helper
        self.bytes = 0

    def flush(self) -> None:
        ranges = tensor_ranges(self._operands())
        self._helper.flush_ranges(ranges)
        self.bytes = sum(length for _, length in ranges)


class CudaCacheFlusher:
    """Zeroes a device buffer of at least twice the L2 size and drops persisting L2 lines."""

    mode = "l2"
    note = None

    def __init__(self, device):
        import torch

        l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or (128 << 20)
        self.bytes = max(2 * l2_bytes, 256 << 20)
        self._buffer = torch.empty(self.bytes, dtype=torch.int8, device=device)

    def flush(self) -> None:
        import torch

        try:
            cudart = torch.cuda.cudart()
            if cudart is not None:
                cudart.cudaCtxResetPersistingL2Cache()
        except (AttributeError, RuntimeError):
            pass
        self._buffer.zero_()


class NoFlush:
    bytes = 0
    mode = "none"
    note = None

    def flush(self) -> None:
        pass


def flusher_for(
    device: str,
    enabled: bool = True,
    cpu_mode: str = "operands",
    operands: Callable[[], Iterable] | None = None,
    helper=None,
    missing: str | None = None,
):
    """The flusher a timing loop on `device` uses; NoFlush when flushing is turned off.

    On a CPU, `cpu_mode` ``operands`` needs `operands` and the loaded native `helper`; without the
    helper it falls back to the streaming flush, whose `note` says why (`missing`, the reason the
    helper is absent).
    """
    if not enabled:
        return NoFlush()
    if device.startswith("cuda"):
        return CudaCacheFlusher(device)
    if cpu_mode == "stream":
        return CpuCacheFlusher()
    if helper is None or operands is None:
        return CpuCacheFlusher(
            note=f"operand flush unavailable ({missing or 'no native helper'}); streamed the cache instead"
        )
    return OperandCacheFlusher(operands, helper)
