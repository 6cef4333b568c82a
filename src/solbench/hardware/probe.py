"""Measuring the local CPU as hardware: memory bandwidth, matrix throughput per dtype, caches.

The CPU's speed of light is empirical: the best rates this machine shows. Bandwidth is the best
of several STREAM-style kernels on arrays far larger than the last-level cache; FLOP/s is the best
large matrix product per dtype. Both are what an excellent kernel could at least reach, so a
T_SOL built from them stays a lower bound for the kernels PyTorch itself runs.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

MATRIX_DTYPES = ("float32", "float64", "bfloat16", "float16")
_TARGET_SECONDS = 0.2


@dataclass
class ProbeResult:
    cpu_model: str
    cores: int
    cache_bytes: dict[str, int]
    bandwidth_bytes_per_s: dict[str, float]
    matmul_flops: dict[str, float]
    matmul_sizes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def cache_sizes() -> dict[str, int]:
    """Data and unified caches of cpu0 as the OS reports them, e.g. {"L1d": 49152, "L3": 314572800}."""
    sizes = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        multiplier = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        sizes[f"L{level}{'d' if kind == 'Data' else ''}"] = int(text.rstrip("KMG")) * multiplier
    return sizes


def _best_time(operation: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        operation()
        best = min(best, time.perf_counter() - start)
    return best


def measure_bandwidth(array_bytes: int, repeats: int = 5) -> dict[str, float]:
    """Bytes/s of copy, scale, add, triad (STREAM counting: no write-allocate) and a read-only sum."""
    import torch

    n = array_bytes // 4
    a, b, c = torch.rand(n), torch.rand(n), torch.rand(n)
    kernels = {
        "copy": (lambda: b.copy_(a), 2),
        "scale": (lambda: torch.mul(a, 3.0, out=b), 2),
        "add": (lambda: torch.add(a, b, out=c), 3),
        "triad": (lambda: torch.add(b, c, alpha=3.0, out=a), 3),
        "read": (lambda: a.sum(), 1),
    }
    return {name: arrays * n * 4 / _best_time(kernel, repeats) for name, (kernel, arrays) in kernels.items()}


def measure_matmul(dtype_name: str, max_size: int = 4096) -> tuple[float, int]:
    """FLOP/s of the best square product, growing the size until one call takes ~0.2 s."""
    import torch

    dtype = getattr(torch, dtype_name)
    size, best = 256, 0.0
    while True:
        a = torch.randn(size, size).to(dtype)
        b = torch.randn(size, size).to(dtype)
        elapsed = _best_time(lambda: torch.mm(a, b), 3)
        best = max(best, 2 * size**3 / elapsed)
        if elapsed >= _TARGET_SECONDS or size >= max_size:
            return best, size
        size *= 2


def probe(progress: Callable[[str], None] = lambda message: None) -> ProbeResult:
    started = time.monotonic()
    caches = cache_sizes()
    last_level = max(caches.values(), default=32 << 20)
    # Arrays of at least 4x the largest cache (the VM may report a host-wide L3), capped to stay quick.
    array_bytes = min(max(4 * last_level, 256 << 20), 1 << 30)
    progress(f"memory bandwidth on {array_bytes >> 20} MiB arrays")
    bandwidth = measure_bandwidth(array_bytes)
    flops, sizes = {}, {}
    for dtype in MATRIX_DTYPES:
        progress(f"matrix products in {dtype}")
        flops[dtype], sizes[dtype] = measure_matmul(dtype)
    return ProbeResult(cpu_model=cpu_model(), cores=os.cpu_count() or 1, cache_bytes=caches,
                       bandwidth_bytes_per_s=bandwidth, matmul_flops=flops, matmul_sizes=sizes,
                       seconds=time.monotonic() - started)
