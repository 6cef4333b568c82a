"""T_b pinned per problem, workload, machine and timing settings: measured once, then read by every environment.

An environment that timed the reference itself would give the same kernel a different reward in each
environment (the reference's own timing noise moves T_b by several percent). So the first environment
on this machine to need a workload's T_b times the reference and pins the result here; every later one,
in this process or another, reads it. One kernel's reward then differs across environments by no more
than the kernel's own timing noise.

The key (`pin_keys`) is the reference-timing key (reference_timing.py: the problem's content, the
workload, the harness version, the device and its libraries, every setting that decides how the
reference is timed) plus this machine (host name and the CPUs this process may use). A pin is one
JSON file under `cache_dir() / "t_b"`. The first writer wins: a second environment that measured at
the same time keeps the pinned value, not its own, so concurrent environments still agree.
A pin is removed by deleting its file (or the folder); a baselines file given to the environment
overrides every pin.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from solbench.atomic_files import written_beside
from solbench.cache_dir import cache_dir
from solbench.evaluation.config import EvaluationConfig
from solbench.evaluation.reference_timing import problem_timing_key, workload_timing_key
from solbench.evaluation.result_cache import entry_path
from solbench.optimize.journal import now
from solbench.spec.problem import Problem
from solbench.spec.workload import Workload

PIN_FOLDER = "t_b"


class PinnedTiming(BaseModel):
    """One workload's pinned T_b."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    key: str
    latency_ms: float
    """The reference's median latency when it was timed."""
    measured_at: str
    """UTC time of that measurement."""
    machine: str
    """The host that measured it."""
    device: str
    """The device model it ran on (a CPU model or GPU name)."""

    @property
    def source(self) -> str:
        """What a card and each feedback say about this T_b (the same text in every environment that reads it)."""
        return (
            f"reference timed once on {self.machine} ({self.device}) at {self.measured_at}; "
            f"pinned as {PIN_FOLDER}/{self.key[:16]}"
        )


def machine_fingerprint() -> dict[str, str | int]:
    """What tells this machine's timings from another's beyond the device model: the host and the usable CPUs."""
    return {"host": platform.node(), "cpus": len(os.sched_getaffinity(0))}


def pin_keys(problem: Problem, workloads: Iterable[Workload], config: EvaluationConfig) -> dict[str, str]:
    """Workload uuid -> the key of its pinned T_b under `config` on this machine. Keyed by the whole problem's
    content, not a held-out split of it, so every split of one problem shares its pins."""
    problem_key = problem_timing_key(problem, config)
    machine = machine_fingerprint()
    keys = {}
    for workload in workloads:
        material = {"reference": workload_timing_key(problem_key, workload), "machine": machine}
        keys[workload.uuid] = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
    return keys


class PinnedTimes:
    """The pins in `folder` (default: `cache_dir() / "t_b"`)."""

    def __init__(self, folder: Path | str | None = None):
        self.folder = Path(folder) if folder is not None else cache_dir() / PIN_FOLDER

    def get(self, key: str) -> PinnedTiming | None:
        """The pin under `key`, or None (a damaged file is no pin: the next `pin` replaces it)."""
        try:
            pinned = PinnedTiming.model_validate_json(entry_path(self.folder, key).read_bytes())
        except (OSError, ValidationError):
            return None
        return pinned if pinned.key == key else None

    def pin(self, key: str, latency_ms: float, device: str) -> PinnedTiming:
        """Pin `latency_ms` under `key` unless another environment pinned first; returns the pin that holds.

        A folder that cannot be written leaves nothing pinned: the measurement is returned, and the next
        environment measures again.
        """
        measured = PinnedTiming(
            key=key, latency_ms=latency_ms, measured_at=now(), machine=str(machine_fingerprint()["host"]), device=device
        )
        path = entry_path(self.folder, key)
        try:
            with written_beside(path, measured.model_dump_json().encode()) as temporary:
                try:
                    os.link(temporary, path)  # fails when a pin exists: the first writer wins
                except FileExistsError:
                    held = self.get(key)
                    if held is not None:
                        return held
                    os.replace(temporary, path)  # the file there was damaged: ours replaces it
        except OSError:
            return measured
        return measured
