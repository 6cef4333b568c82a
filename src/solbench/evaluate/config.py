"""Settings of one evaluation run."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from solbench.sandbox.measure import TimingPlan


AUTO_DEVICE = "auto"


def default_memory_limit_bytes() -> int:
    """Half of physical memory: the parent holds inputs, references and golden results too."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


def resolve_device(device: str) -> str:
    """`auto` becomes ``cuda`` when a CUDA device is present, else ``cpu``; any other name is returned as is.

    Imports torch only for `auto`, so building a config never loads it.
    """
    if device != AUTO_DEVICE:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass(frozen=True)
class EvaluationConfig:
    """Settings of one evaluation. These defaults are the defaults of the library and of every CLI command."""

    device: str = AUTO_DEVICE
    """``cpu``, ``cuda`` (``cuda:N``), or ``auto``: cuda when present, else cpu, decided when an evaluation starts."""
    timeout_s: float = 120.0
    """Wall-clock limit for each sandbox request: one correctness call, or one workload's timing."""
    build_timeout_s: float = 900.0
    rounds: int = 3
    """Correctness rounds, each on fresh inputs; timing rotates through the same sets."""
    timing: TimingPlan = TimingPlan()
    """How solution and reference are timed; capture iterations are chosen per workload."""
    timer: str | None = None
    flush_cache: bool = True
    time_reference: bool = True
    check_precision: bool = True
    static_check: bool = True
    """Refuse solutions with blocking static findings (REWARD_HACK) before running them."""
    memory_limit_bytes: int | None = field(default_factory=default_memory_limit_bytes)
    """Sandbox memory limit; default half of physical memory, None for no limit."""
    data_roots: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise ValueError("rounds must be at least 1")
        if self.timeout_s <= 0:
            raise ValueError("timeout must be positive")

    def resolved(self) -> "EvaluationConfig":
        """This config with `auto` replaced by the device this machine has."""
        return replace(self, device=resolve_device(self.device))
