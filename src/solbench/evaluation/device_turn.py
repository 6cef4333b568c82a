"""One timing at a time per device, across every evaluator on the machine.

Correctness rounds may run side by side (a runner's workers, a service's embedded workers, many agent
rollouts), but two timed loops on one device measure each other: on a CPU they share caches, memory
bandwidth and often cores; on a GPU, its queue. So every timed section (the solution's halves and the
reference between them) holds the device's turn: an exclusive lock on a file in the cache folder, taken
by the trusted evaluator, never by a sandbox. The trace records how long the turn was waited for and the
machine's load average when it began, the load the timing ran under.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

from solbench.cache_dir import cache_dir


@dataclass(frozen=True)
class Turn:
    waited_s: float
    """Seconds spent waiting for another evaluation's timing on this device to end."""
    load_average: float
    """The 1-minute load average when the turn began."""


@contextlib.contextmanager
def timing_turn(device: str) -> Iterator[Turn]:
    """Hold `device`'s timing turn for the block (blocking until it is free)."""
    path = cache_dir() / "locks" / f"timing-{re.sub(r'[^A-Za-z0-9_.-]', '_', device)}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        asked = time.monotonic()
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield Turn(waited_s=time.monotonic() - asked, load_average=os.getloadavg()[0])
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
