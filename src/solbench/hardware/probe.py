"""Measuring the local CPU as hardware: memory bandwidth, matrix throughput per dtype, caches.

Bandwidth is the best of several STREAM-style kernels on arrays far larger than the last-level
cache. Compute has two figures per dtype: the best large matrix product measured, and the
instruction-set peak (cores x FLOPs per cycle x clock, see `isa_peaks`). Measured rates vary
from run to run and an excellent kernel can beat PyTorch's, so T_SOL takes the larger of the two.
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


TURBO_ALLOWANCE = 2.0
"""Where the OS gives no maximum clock (virtual machines show the nominal one), turbo is assumed to
reach at most twice the reported clock, so that the instruction-set peak stays an upper bound."""
FMA_PORTS = 2
"""Vector FMA units per core: two on current server cores (one on some client parts; two errs high)."""


@dataclass
class ProbeResult:
    cpu_model: str
    cores: int
    cache_bytes: dict[str, int]
    bandwidth_bytes_per_s: dict[str, float]
    matmul_flops: dict[str, float]
    matmul_sizes: dict[str, int] = field(default_factory=dict)
    isa_flops: dict[str, float] = field(default_factory=dict)
    """Instruction-set peak per dtype: cores x FLOPs per cycle x clock."""
    isa_formulas: dict[str, str] = field(default_factory=dict)
    isa_ceiling: bool = False
    """The instruction-set peaks are upper bounds of this CPU (x86 with AVX2+FMA or AVX-512, whose FMA ports and
    lanes `isa_peaks` counts; logical cores and a maximum clock make them err high), so a measured rate above one
    is refused (`local.check_probe`). False elsewhere (ARM cores with more FMA pipes than FMA_PORTS) and in probes
    stored before the field existed."""
    seconds: float = 0.0


def cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def cpu_flags() -> set[str]:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith(("flags", "Features")):
                return set(line.split(":", 1)[1].split())
    return set()


def max_clock_mhz() -> tuple[float, str]:
    """The highest clock a core may run at, and where that figure comes from."""
    path = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    if path.exists():
        return int(path.read_text()) / 1000, "cpufreq cpuinfo_max_freq"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("cpu MHz"):
                nominal = float(line.split(":", 1)[1])
                return nominal * TURBO_ALLOWANCE, f"{TURBO_ALLOWANCE:g} x the reported {nominal:.0f} MHz"
    return 5000.0, "no clock reported: 5 GHz assumed"


def _x86_simd_lanes(flags: set[str]) -> int | None:
    """fp32 lanes of the widest x86 FMA vectors these flags name; None where none is known."""
    return 16 if "avx512f" in flags else 8 if {"avx2", "fma"} <= flags else None


def isa_is_ceiling(flags: set[str]) -> bool:
    """Whether `isa_peaks` of a CPU with these flags bounds what it can compute: x86 SIMD whose width is known."""
    return _x86_simd_lanes(flags) is not None


def isa_peaks(flags: set[str], cores: int, clock_mhz: float) -> dict[str, tuple[float, str]]:
    """Peak FLOP/s per dtype from the instruction set: matrix engines (AMX) where present, else SIMD FMAs."""
    lanes = _x86_simd_lanes(flags) or 4
    simd = lanes * 2 * FMA_PORTS  # fp32 FLOPs per cycle per core
    per_cycle = {
        "float32": (simd, f"{FMA_PORTS} FMA ports x {lanes} fp32 lanes x 2"),
        "float64": (simd // 2, f"{FMA_PORTS} FMA ports x {lanes // 2} fp64 lanes x 2"),
    }
    if "amx_bf16" in flags:
        per_cycle["bfloat16"] = (2048, "AMX: 1024 bf16 MACs per cycle x 2")
    elif "avx512_bf16" in flags:
        per_cycle["bfloat16"] = (4 * simd, "AVX512-BF16 dot products: 2x fp32 lanes x 2 products")
    if "amx_fp16" in flags:
        per_cycle["float16"] = (2048, "AMX: 1024 fp16 MACs per cycle x 2")
    elif "avx512_fp16" in flags:
        per_cycle["float16"] = (2 * simd, "AVX512-FP16: 2x fp32 lanes")
    if "amx_int8" in flags:
        per_cycle["int8"] = (4096, "AMX: 2048 int8 MACs per cycle x 2")
    hertz = clock_mhz * 1e6
    return {
        dtype: (cores * flops * hertz, f"{cores} cores x {flops} FLOP/cycle ({how}) x {clock_mhz:.0f} MHz")
        for dtype, (flops, how) in per_cycle.items()
    }


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
        elapsed = _best_time(lambda a=a, b=b: torch.mm(a, b), 3)
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
    cores = os.cpu_count() or 1
    clock, clock_source = max_clock_mhz()
    flags = cpu_flags()
    peaks = isa_peaks(flags, cores, clock)
    return ProbeResult(
        cpu_model=cpu_model(),
        cores=cores,
        cache_bytes=caches,
        bandwidth_bytes_per_s=bandwidth,
        matmul_flops=flops,
        matmul_sizes=sizes,
        isa_flops={d: p for d, (p, _) in peaks.items()},
        isa_formulas={d: f"{formula}; clock: {clock_source}" for d, (_, formula) in peaks.items()},
        isa_ceiling=isa_is_ceiling(flags),
        seconds=time.monotonic() - started,
    )
