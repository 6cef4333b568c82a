"""Workload tiers: the published (GPU-scale) workloads and an optional CPU tier beside them.

``workload.jsonl`` stays exactly what upstream tools read: the GPU tier. ``workload.cpu.jsonl`` (same
line format) holds small workloads a CPU runs in well under a second each, so the same problem can be
evaluated on this machine and scored at its real scale on a GPU. Which tier an evaluation reads is
chosen by device unless the caller names one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from solbench.spec.errors import SpecError

Tier = Literal["gpu", "cpu", "all"]
TIERS: tuple[str, ...] = ("gpu", "cpu", "all")
GPU_WORKLOAD_FILE = "workload.jsonl"
CPU_WORKLOAD_FILE = "workload.cpu.jsonl"
TIER_FILES = {"gpu": GPU_WORKLOAD_FILE, "cpu": CPU_WORKLOAD_FILE}


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
    """(tier name, file) pairs a load reads, in order; a named CPU tier that is absent is an error."""
    folder = Path(folder)
    check_tier(tier, folder)
    if tier == "gpu":
        return [("gpu", folder / GPU_WORKLOAD_FILE)]
    cpu = folder / CPU_WORKLOAD_FILE
    if tier == "cpu":
        if not cpu.is_file():
            raise SpecError(
                cpu,
                None,
                "no CPU tier for this problem (write one with `solbench suite cpu-tier "
                f"{folder}`, or choose --tier gpu)",
            )
        return [("cpu", cpu)]
    files = [("gpu", folder / GPU_WORKLOAD_FILE)]
    return files + [("cpu", cpu)] if cpu.is_file() else files
