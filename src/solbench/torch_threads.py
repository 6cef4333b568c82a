"""Torch's intra-op thread count, lowered for a block of work and given back after."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def at_most_threads(count: int | None):
    """Inside, torch's CPU ops use at most `count` intra-op threads (None: as they are); the count is restored on
    every exit. Never raised: growing torch's OpenMP pool starts new workers, which the sandbox's thread guard
    would take for a solution's. torch keeps the count per thread (new threads copy the global one), so other
    threads' work is unaffected unless they first touch torch meanwhile."""
    import torch

    chosen = torch.get_num_threads()
    if count is None or chosen <= count:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(chosen)
