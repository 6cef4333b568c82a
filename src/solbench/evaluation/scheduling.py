"""The evaluator's own CPU scheduling, checked before it times the reference.

A sandbox that runs as the evaluator's user (the caller is not root, or the sandbox keeps root)
may change the CPU affinity and nice value of any process of that user: pinning the evaluator's
threads to one CPU, or lowering their priority, slows T_b down and flatters the solution. Before
the reference is timed (the sandbox stopped meanwhile), every thread of the evaluator gets back the
scheduling the evaluator had when the sandbox started, and what was changed is reported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Scheduling:
    affinity: frozenset[int]
    nice: int

    @classmethod
    def of(cls, thread_id: int = 0) -> Scheduling:
        """A thread's scheduling (0: the calling thread); Linux keeps both per thread."""
        return cls(frozenset(os.sched_getaffinity(thread_id)), os.getpriority(os.PRIO_PROCESS, thread_id))


def restore(baseline: Scheduling) -> list[str]:
    """Give every thread of this process `baseline`'s scheduling; describe each thread that had another one."""
    changed = []
    for name in os.listdir("/proc/self/task"):
        thread_id = int(name)
        try:
            now = Scheduling.of(thread_id)
        except (ProcessLookupError, PermissionError):
            continue  # exited meanwhile
        if now.affinity != baseline.affinity:
            changed.append(f"thread {thread_id} pinned to CPUs {sorted(now.affinity)}")
            _quietly(os.sched_setaffinity, thread_id, baseline.affinity)
        if now.nice != baseline.nice:
            changed.append(f"thread {thread_id} at nice {now.nice}, not {baseline.nice}")
            _quietly(os.setpriority, os.PRIO_PROCESS, thread_id, baseline.nice)
    return changed


def _quietly(function, *args) -> None:
    try:
        function(*args)
    except (ProcessLookupError, PermissionError, OSError):
        pass
