"""`nonzero` of one slice after another of the same strided tensor, answered from one `nonzero` of its base.

A routing loop takes `torch.where(mask[e])` for every expert `e` of a one-hot mask permuted to put the experts
first (`one_hot(ids).permute(2, 1, 0)`: every element of `mask[e]` on its own cache line). Each call walks the
whole mask's memory: 256 experts at 2,048 tokens cost about 60 ms per input draw, more than the rest of the
loop's analysis. The same indices come from one `nonzero` of the contiguous base the slices view, with its
coordinates reordered as the slice orders them, sorted once, and cut per slice: about 15 ms for all 256.
`nonzero` lists a tensor's nonzero coordinates in row-major order, so a slice's are exactly the base's
coordinates whose fixed dims hold the slice's indices, in lexicographic order of the remaining dims.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MIN_ELEMENTS = 1 << 20
"""Bases smaller than this keep the per-slice call (it hits the cache; the sort would cost more)."""
MAX_LISTED_GROUPS = 1 << 12
"""Bases sliced into at most this many slices have every slice's bounds listed once, with the sort (a routing loop
asks for each of its experts' slices in turn); more slices are searched for one at a time."""


@dataclass
class _Sorted:
    version: int
    keys: Any
    """Per nonzero of the base, in ascending order: fixed-dim group * slice size + row-major index in the slice."""
    coordinates: Any
    """The slice's coordinates of each, in the same order."""
    slice_size: int
    bounds: list[int] | None
    """Per slice (fixed-dim group), where its coordinates start; one more entry for the end: the sorted keys
    searched once for every group's first key, as `nonzero` would search them per slice."""


class SliceNonzero:
    """Remembers, per base tensor and way of slicing it, its nonzero coordinates sorted slice by slice. One per
    values mode, so one per recording: the tensors it holds live no longer than that."""

    def __init__(self):
        self._sorted: dict[tuple, _Sorted] = {}
        self._layouts: dict[tuple, tuple | None] = {}
        """`_layout`'s answer per geometry (its inputs): a routing loop slices one base the same way per expert."""
        self._keep: list = []
        self._asked: dict[tuple, int] = {}
        """Key (base, way of slicing it) -> the base's version when a slice of it was last asked for: the sort waits
        for a second slice of the same base at the same version, so neither a lone `nonzero` of one small slice of a
        large mask nor a loop that writes to the mask between its slices (a capacity cut) sorts all of it per slice."""

    def nonzero(self, view):
        """`torch.nonzero(view)`, or None where `view` is not a slice of a large contiguous base this can answer (nor
        the first slice of one asked for since the base was last written)."""
        import torch

        base = view._base
        if (
            base is None
            or base.is_meta
            or not base.is_contiguous()
            or base.numel() < MIN_ELEMENTS
            or base.dtype.is_complex
            or view.dim() == 0
            or view.numel() == 0
        ):
            return None
        geometry = (
            tuple(base.shape),
            base.stride(),
            tuple(view.shape),
            view.stride(),
            view.storage_offset() - base.storage_offset(),
        )
        if geometry not in self._layouts:
            self._layouts[geometry] = _layout(view, base)
        layout = self._layouts[geometry]
        if layout is None:
            return None
        fixed, fixed_index, used = layout
        key = (id(base), fixed, used)
        entry = self._sorted.get(key)
        if entry is None or entry.version != base._version:
            version = base._version
            if self._asked.get(key) != version:
                if key not in self._asked:
                    self._keep.append(base)  # its id stays its own while the key (and its entry) is kept
                self._asked[key] = version
                return None
            entry = self._sorted[key] = _sort(base, fixed, used)
        group = 0
        for dim, index in zip(fixed, fixed_index):
            group = group * base.shape[dim] + index
        if entry.bounds is not None:
            start, end = entry.bounds[group], entry.bounds[group + 1]
        else:
            low = group * entry.slice_size
            start, end = torch.searchsorted(entry.keys, torch.tensor([low, low + entry.slice_size])).tolist()
        return entry.coordinates[start:end].clone()


def _layout(view, base) -> tuple[tuple, tuple, tuple] | None:
    """(the base's dims the view fixes, their indices, the base's dim behind each of the view's dims), or None
    where the view is not a selection plus permutation of the base's dims. Reads only the base's and the view's
    shapes and strides and the view's storage offset from the base's (`SliceNonzero` keeps answers by them)."""
    sizes, strides = list(base.shape), list(base.stride())
    if any(size <= 1 for size in sizes):
        return None  # a size-1 dim's stride says nothing about where it lies
    used = []
    for size, stride in zip(view.shape, view.stride()):
        matches = [d for d in range(len(sizes)) if strides[d] == stride and sizes[d] == size and d not in used]
        if len(matches) != 1:
            return None
        used.append(matches[0])
    fixed = tuple(d for d in range(len(sizes)) if d not in used)
    offset = view.storage_offset() - base.storage_offset()
    indices = []
    for dim in fixed:  # a contiguous base's strides fall with the dim: the offset splits into indices one way
        index, offset = divmod(offset, strides[dim])
        if not 0 <= index < sizes[dim]:
            return None
        indices.append(index)
    if offset != 0 or not fixed:
        return None
    return fixed, tuple(indices), tuple(used)


def _sort(base, fixed: tuple, used: tuple) -> _Sorted:
    import math

    import torch

    found = torch.nonzero(base)
    group = torch.zeros(found.shape[0], dtype=torch.int64)
    for dim in fixed:
        group = group * base.shape[dim] + found[:, dim]
    inner = torch.zeros(found.shape[0], dtype=torch.int64)
    for dim in used:
        inner = inner * base.shape[dim] + found[:, dim]
    slice_size = math.prod(base.shape[dim] for dim in used)
    keys, order = torch.sort(group * slice_size + inner)
    coordinates = found[:, list(used)][order].contiguous()
    groups = math.prod(base.shape[dim] for dim in fixed)
    bounds = None
    if groups <= MAX_LISTED_GROUPS:
        bounds = torch.searchsorted(keys, torch.arange(groups + 1, dtype=torch.int64) * slice_size).tolist()
    return _Sorted(base._version, keys, coordinates, slice_size, bounds)
