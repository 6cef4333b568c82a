"""Workload tiers: the published (GPU-scale) workloads and an optional CPU tier beside them.

``workload.jsonl`` stays exactly what upstream tools read: the GPU tier. ``workload.cpu.jsonl`` (same
line format) holds small workloads a CPU runs in well under a second each, so the same problem can be
evaluated on this machine and scored at its real scale on a GPU. Which tier an evaluation reads is
chosen by device unless the caller names one. A problem whose published workloads are already small needs no
CPU tier: asked for one, it gets its published workloads (`published_stand_in`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from solbench.spec.errors import SpecError

Tier = Literal["gpu", "cpu", "all"]
TIERS: tuple[str, ...] = ("gpu", "cpu", "all")
GPU_WORKLOAD_FILE = "workload.jsonl"
CPU_WORKLOAD_FILE = "workload.cpu.jsonl"
TIER_FILES = {"gpu": GPU_WORKLOAD_FILE, "cpu": CPU_WORKLOAD_FILE}
CPU_TIER_MAX_BYTES = 32_000_000
"""Bytes of inputs and outputs (size-based) per CPU-tier workload: what `solbench suite cpu-tier` derives to by
default, and what each published workload must stay within to stand in for an absent CPU tier."""


def has_cpu_tier(folder: Path | str) -> bool:
    return (Path(folder) / CPU_WORKLOAD_FILE).is_file()


def default_tier(folder: Path | str, device: str | None = None) -> str:
    """``cpu`` when the evaluation runs on the CPU and the folder has a CPU tier, else ``gpu``.

    `device` None means the device an evaluation would pick here (cuda when present); torch is imported
    for that only when the folder has a CPU tier, so loading an upstream folder never needs it.
    """
    if not has_cpu_tier(folder):
        return "gpu"
    if device is None or device == "auto":
        import torch  # the same choice as evaluate.config.resolve_device("auto")

        device = "cuda" if torch.cuda.is_available() else "cpu"
    return "cpu" if device.startswith("cpu") else "gpu"


def check_tier(tier: str, where: Path | str) -> str:
    if tier not in TIERS:
        raise SpecError(where, "tier", f"unknown tier {tier!r} (known: {', '.join(TIERS)})")
    return tier


def tier_files(folder: Path | str, tier: str) -> list[tuple[str, Path]]:
    """(tier name, file) pairs a load reads, in order. A CPU tier asked for and absent reads the published file
    (``gpu``): its workloads must then stand in for one (`published_stand_in`)."""
    folder = Path(folder)
    check_tier(tier, folder)
    cpu = folder / CPU_WORKLOAD_FILE
    if tier == "gpu" or not cpu.is_file():
        return [("gpu", folder / GPU_WORKLOAD_FILE)]
    if tier == "cpu":
        return [("cpu", cpu)]
    return [("gpu", folder / GPU_WORKLOAD_FILE), ("cpu", cpu)]


def published_stand_in(folder: Path | str, sizes: Sequence[tuple[str, int]]) -> str:
    """Why the published workloads ((uuid, size-based bytes) each: `sizes`) stand in for the CPU tier of a folder
    without one; SpecError, saying what to do, where one is too large for a CPU."""
    folder = Path(folder)
    uuid, largest = max(sizes, key=lambda size: size[1])
    limit = f"{CPU_TIER_MAX_BYTES / 1e6:.0f} MB"
    if largest > CPU_TIER_MAX_BYTES:
        raise SpecError(
            folder / CPU_WORKLOAD_FILE,
            None,
            f"no CPU tier for this problem, and its published workloads are too large to stand in for one (workload "
            f"{uuid} takes {largest / 1e6:,.0f} MB of inputs and outputs, above the {limit} of a CPU-tier workload): "
            f"write one with `solbench suite cpu-tier {folder}` (it says why where none can be derived), or choose "
            "--tier gpu",
        )
    return (
        f"no CPU tier needed: the published workloads are small (at most {_size(largest)} of inputs and outputs "
        f"each, {limit} allowed) and are used as they are"
    )


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count:,} bytes"
