"""Fresh addresses for every call, so that a result kept by address can neither be found nor handed back.

The live inputs and the DPS output buffers are views into one slab per device, laid out once, each
tensor in a region of its own. Each correctness or timed call moves every tensor `SHIFT` bytes further
along its region, so no two of those calls in an evaluation see the same data pointer, not even one
another tensor had (SOL-ExecBench's shifting memory pool does the same); a cache keyed by an input's
or a destination's address misses. Moving makes views only: nothing is allocated between timed calls,
and a slab costs `SHIFT` bytes per call and tensor beyond one set (1 MiB per tensor at the default size).
Warm-up calls cycle through a few slots of their own, below the fresh ones, so the timed calls
after them still get addresses that no call used. A slab that runs out of fresh slots is followed
by a new one, and the old one is kept for the evaluation, so its addresses are never handed out again.

`ReturnedStorages` closes the other side: a value-returning call whose output lives in the memory
of an output an earlier call returned, while that one is still alive, is handing back a kept result.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from solbench.guard.runtime import GuardViolation

SHIFT = 256
"""Bytes each call moves by: every tensor stays 256-byte aligned, as vectorised loads, TMA (16 B) and cuBLAS
(256 B) expect, and a kernel's alignment-specialised variant is the same on every call."""
WARMUP_SLOTS = 8
FRESH_SLOTS = 4096
"""Fresh slots per slab: the correctness rounds and a timed loop at its iteration cap (2,000) fit in one."""


@dataclass(frozen=True)
class _Placement:
    """One tensor of the set: its region is the `index`th on its device's slab."""

    device: Any
    index: int
    span: int
    dtype: Any
    size: tuple[int, ...]
    stride: tuple[int, ...]


def span_bytes(size: Sequence[int], stride: Sequence[int], itemsize: int) -> int:
    """Bytes from a view's first element to just past its last (0 for an empty view)."""
    if any(extent == 0 for extent in size):
        return 0
    return (1 + sum((extent - 1) * step for extent, step in zip(size, stride))) * itemsize


def _aligned(count: int) -> int:
    return -(-count // SHIFT) * SHIFT


class ShiftingSlab:
    """A set of tensors (and pass-through values) placed at a new address on every call."""

    def __init__(self, templates: Sequence, fresh_slots: int = FRESH_SLOTS):
        import torch

        self._templates = list(templates)
        self._placements: list[_Placement | None] = []
        self._spans: dict[Any, list[int]] = {}
        """Per device, the bytes of each tensor placed there, in region order."""
        for value in self._templates:
            if not isinstance(value, torch.Tensor):
                self._placements.append(None)
                continue
            layout = torch.empty_like(value, device="meta")  # the strides a copy of `value` gets (clone's rule)
            span = span_bytes(layout.shape, layout.stride(), value.element_size())
            spans = self._spans.setdefault(value.device, [])
            self._placements.append(
                _Placement(value.device, len(spans), span, value.dtype, tuple(layout.shape), tuple(layout.stride()))
            )
            spans.append(span)
        self._slabs: list[dict[Any, tuple[Any, list[int]]]] = []
        """Every slab of this set, newest last, per device with its regions' starts; the older ones are kept so their
        addresses are not handed out again."""
        self._fresh_slots = 0
        self._next_fresh = 0
        self._warmups = 0
        self._grow(fresh_slots)

    def _grow(self, fresh_slots: int) -> None:
        import torch

        travel = (WARMUP_SLOTS + fresh_slots) * SHIFT
        slabs = {}
        for device, spans in self._spans.items():
            size = sum(_aligned(span) + travel for span in spans)
            slab = torch.empty(size + SHIFT, dtype=torch.uint8, device=device)
            pad = -slab.data_ptr() % SHIFT  # CPU allocations are only 64-byte aligned
            starts = [pad + sum(_aligned(span) + travel for span in spans[:index]) for index in range(len(spans))]
            slabs[device] = (slab, starts)
        self._slabs.append(slabs)
        self._fresh_slots, self._next_fresh = fresh_slots, 0
        self._storages = frozenset(
            slab.untyped_storage().data_ptr() for slabs in self._slabs for slab, _ in slabs.values()
        )

    def reserve(self, calls: int) -> None:
        """Make sure the next `calls` fresh placements come from one slab (call it outside timed regions)."""
        if self._fresh_slots - self._next_fresh < calls:
            self._grow(max(calls, FRESH_SLOTS))

    def fresh(self) -> list[Any]:
        """The set at addresses no earlier placement of it used."""
        self.reserve(1)
        self._next_fresh += 1
        return self._views(WARMUP_SLOTS + self._next_fresh - 1)

    def warmup(self) -> list[Any]:
        """The set at one of the warm-up slots, which fresh placements never use."""
        self._warmups += 1
        return self._views((self._warmups - 1) % WARMUP_SLOTS)

    @property
    def storages(self) -> frozenset[int]:
        """Data pointers of the slabs' storages: a tensor whose storage starts at one of them is a view of the set."""
        return self._storages  # made when a slab is, as it is read inside timed calls (calling.materialized)

    def _views(self, slot: int) -> list[Any]:
        slabs = self._slabs[-1]
        views: list[Any] = []
        for template, placement in zip(self._templates, self._placements):
            if placement is None:
                views.append(template)
                continue
            slab, starts = slabs[placement.device]
            start = starts[placement.index] + slot * SHIFT
            raw = slab[start : start + placement.span]
            views.append(raw.view(placement.dtype).as_strided(placement.size, placement.stride))
        return views


class ReturnedStorages:
    """The storages of the outputs earlier calls returned, held weakly, to spot an output handed back again.

    A storage's Python object lives exactly as long as its memory (torch keeps it for every view), so an earlier
    output's storage that is still alive when the next call's outputs are checked is one something kept: the harness
    drops the last call's outputs when the next call returns, so only the solution can keep one (through any view,
    in any rotation of buffers). Memory the allocator freed and handed out again is an honest new output."""

    def __init__(self) -> None:
        self._earlier: dict[int, weakref.ref] = {}

    def check(self, outputs: Sequence) -> None:
        """Refuse `outputs` (one call's, checked once) if one lives in an earlier call's output; then remember them."""
        for index, value in enumerate(outputs):
            if value.numel() == 0:
                continue
            earlier = self._earlier.get(value.untyped_storage().data_ptr())
            if earlier is not None and earlier() is not None:
                raise GuardViolation(
                    "output_replay",
                    f"output {index} lives in the memory of an output an earlier call returned, which is still "
                    "alive: every call must compute its result into memory of its own",
                )
        if len(self._earlier) > 4096:
            self._earlier = {key: ref for key, ref in self._earlier.items() if ref() is not None}
        for value in outputs:
            if value.numel():
                storage = value.untyped_storage()
                self._earlier[storage.data_ptr()] = weakref.ref(storage)
