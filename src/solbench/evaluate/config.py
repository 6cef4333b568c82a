"""Settings of one evaluation run."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from solbench.sandbox.measure import TimingPlan


def default_memory_limit_bytes() -> int:
    """Half of physical memory: the parent holds inputs, references and golden results too."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


@dataclass(frozen=True)
class EvaluationConfig:
    device: str = "cpu"
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
    memory_limit_bytes: int | None = None
    data_roots: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise ValueError("rounds must be at least 1")
        if self.timeout_s <= 0:
            raise ValueError("timeout must be positive")
