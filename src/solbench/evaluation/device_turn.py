"""One timing at a time per physical device, across every evaluator on the machine.

Correctness rounds may run side by side (a runner's workers, a service's embedded workers, many agent
rollouts), but two timed loops on one device measure each other: on a CPU they share caches, memory
bandwidth and often cores; on a GPU, its queue. So every timed section (the solution's halves and the
reference between them) holds the device's turn: an exclusive lock on a file in the cache folder, taken
by the trusted evaluator, never by a sandbox. The trace records how long the turn was waited for and the
machine's load average when it began, the load the timing ran under.

The lock is named after the physical device, not after what an evaluation calls it: ``cuda`` and ``cuda:0``
are one GPU, and under CUDA_VISIBLE_DEVICES two processes may both say ``cuda:0`` of different GPUs, or name
one GPU by different indices; its UUID is the same for all of them. A CPU has one lock per machine.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from solbench.cache_dir import cache_dir

CudaIdentity = Callable[[int | None], str]
"""The physical identity of a CUDA device from its index as this process sees it (None: the current device)."""


@dataclass(frozen=True)
class Turn:
    waited_s: float
    """Seconds spent waiting for another evaluation's timing on this device to end."""
    load_average: float
    """The 1-minute load average when the turn began."""


def device_key(device: str, cuda_identity: CudaIdentity | None = None) -> str:
    """The name of the physical device `device` names, which its lock file is named after: ``cpu`` for the machine's
    CPUs, ``cuda-`` and the GPU's identity (`cuda_identity`, by default `physical_cuda_identity`) for a GPU. Only
    a CUDA device is looked up, and only then is torch imported."""
    kind, _, index = device.partition(":")
    if kind == "cpu":
        return "cpu"
    if kind == "cuda":
        identity = (cuda_identity or physical_cuda_identity)(int(index) if index else None)
        return f"cuda-{_file_safe(identity)}"
    return _file_safe(device)


def physical_cuda_identity(index: int | None) -> str:
    """The GPU's UUID (the same whatever CUDA_VISIBLE_DEVICES says); where torch does not report one, the entry
    CUDA_VISIBLE_DEVICES has for it, or its index where that is unset."""
    import torch

    resolved = torch.cuda.current_device() if index is None else index
    uuid = getattr(torch.cuda.get_device_properties(resolved), "uuid", None)
    if uuid is not None:
        return str(uuid)
    visible = [entry.strip() for entry in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if entry.strip()]
    return f"index-{visible[resolved] if resolved < len(visible) else resolved}"


def _file_safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


class DeviceLock:
    """A device's timing lock for one evaluation: the lock file is opened on the first turn (an evaluation that
    times nothing opens none) and stays open until `close`, however many workloads take turns.

    Not to be shared by evaluations that run at the same time: flock excludes open files, not threads, so two
    turns through one open file would not wait for each other. The descriptor is not inherited by sandboxes."""

    def __init__(self, device: str, cuda_identity: CudaIdentity | None = None):
        self.device = device
        self._cuda_identity = cuda_identity
        self._fd: int | None = None

    @property
    def path(self) -> Path:
        """The lock file (naming the physical device, which may look it up)."""
        return cache_dir() / "locks" / f"timing-{device_key(self.device, self._cuda_identity)}.lock"

    @contextlib.contextmanager
    def turn(self) -> Iterator[Turn]:
        """Hold the device's turn for the block (blocking until it is free)."""
        fd = self._open()
        asked = time.monotonic()
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield Turn(waited_s=time.monotonic() - asked, load_average=os.getloadavg()[0])
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _open(self) -> int:
        if self._fd is None:
            path = self.path
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)  # not inheritable (PEP 446)
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> DeviceLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


@contextlib.contextmanager
def timing_turn(device: str) -> Iterator[Turn]:
    """One turn on `device`, its lock file opened and closed with it: for a caller that times once."""
    with DeviceLock(device) as lock, lock.turn() as turn:
        yield turn
