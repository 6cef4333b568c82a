"""Which rows (indices along dim 0) of a graph input the reference reads: slices, selects, known indices.

Compulsory bytes count the rows of an input that some op with a nonempty result reads, not the
whole input: a mixture-of-experts reference that uses `w[e]` only for the experts its tokens
route to needs only those experts' weights, and a kernel that skips the others must not appear
faster than light. Views carry the rows of the input they look into; a select or slice along
the input's dim 0 narrows them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from solbench.torch_threads import at_most_threads

# Views whose row i is row i of their source when both have the same leading size: they keep the
# flat order of the elements, so equal leading sizes mean equal blocks.
_ORDER_KEEPING_VIEWS = {
    "view",
    "_unsafe_view",
    "reshape",
    "_reshape_alias",
    "alias",
    "detach",
    "unsqueeze",
    "squeeze",
    "unflatten",
    "view_as_real",
    "view_as_complex",
    "lift_fresh",
}
_SPLITS = {"unbind": 1, "split": 2, "split_with_sizes": 2, "chunk": 2}
"""Views returning several pieces, with the argument position of their dim."""


@dataclass(frozen=True)
class InputRows:
    """Where a tensor's values lie in a graph input: rows of it, and whether dim 0 still indexes them."""

    root: int
    """Position of the graph input."""
    rows: range
    leading: bool
    """The tensor's dim 0 is the input's dim 0 (restricted to `rows`): a select or slice on it narrows."""


def view_rows(name: str, args: tuple, source, where: InputRows, out, piece: int, pieces: list, total: int) -> InputRows:
    """The rows a view (output `piece` of `pieces`) of `source` covers, given the rows `source` covers
    and the input's `total` rows."""
    if name == "as_strided":  # may reach anywhere in the input's storage
        return InputRows(where.root, range(total), False)
    if not where.leading or source.dim() == 0:
        return InputRows(where.root, where.rows, False)
    if name == "select":
        if _dim(args[1], source) != 0:
            return where
        return InputRows(where.root, range(where.rows[args[2]], where.rows[args[2]] + 1), False)
    if name == "slice":
        dim = _dim(args[1] if len(args) > 1 else 0, source)
        if dim != 0:
            return where
        start, end = (args[2] if len(args) > 2 else None), (args[3] if len(args) > 3 else None)
        step = args[4] if len(args) > 4 else 1
        return InputRows(where.root, where.rows[slice(start, end, step)], True)
    if name in _SPLITS:
        position = _SPLITS[name]
        if _dim(args[position] if len(args) > position else 0, source) != 0:
            return where
        if name == "unbind":
            return InputRows(where.root, range(where.rows[piece], where.rows[piece] + 1), False)
        start = sum(p.shape[0] for p in pieces[:piece])
        return InputRows(where.root, where.rows[start : start + out.shape[0]], True)
    return InputRows(where.root, where.rows, _keeps_leading(name, args, source, out))


def _keeps_leading(name: str, args: tuple, source, out) -> bool:
    if out.dim() == 0:
        return False
    if name == "transpose":
        return 0 not in (_dim(args[1], source), _dim(args[2], source))
    if name == "permute":
        return _dim(args[1][0], source) == 0
    if name == "expand":
        return out.dim() == source.dim() and out.shape[0] == source.shape[0]
    return name in _ORDER_KEEPING_VIEWS and out.shape[0] == source.shape[0]


def _dim(dim: int, tensor) -> int:
    return dim % max(tensor.dim(), 1)


def gathered_rows(name: str, args: Sequence[Any]) -> list[int] | None:
    """Rows along dim 0 that a gather reads, where its index values are known (real tensors), else None."""
    index = gather_index(name, args)
    return None if index is None else sorted(set(index.reshape(-1).tolist()))


def gather_index(name: str, args: Sequence[Any]):
    """The real integer tensor whose values are the rows along dim 0 a gather reads, else None."""
    index = None
    if name == "embedding" and len(args) > 1:
        index = args[1]
    elif name == "index_select" and _dim(args[1], args[0]) == 0:
        index = args[2]
    elif name in ("index", "_unsafe_index") and len(args) > 1 and args[1]:
        index = args[1][0]
    if index is None:
        return None
    import torch
    from torch._subclasses.fake_tensor import is_fake

    if (
        not isinstance(index, torch.Tensor)
        or is_fake(index)
        or index.is_meta
        or index.dtype.is_floating_point
        or index.dtype == torch.bool
        or index.dtype == torch.uint8  # `index` takes a uint8 tensor as a mask, as it does a bool one
    ):
        return None
    return index


PENDING_GATHERED = 1 << 22
"""Gathered positions a `RowSet` keeps as tensors (32 MiB) before it turns them into rows."""


class RowSet:
    """A union of rows: contiguous ranges (slices, whole reads) and single indices (selects, gathers)."""

    def __init__(self, total: int):
        self.total = total
        self._ranges: list[tuple[int, int]] = []
        self._indices: set[int] = set()
        self._gathered: list[tuple[Any, range]] = []
        """(a copy of a gather's index values, the input rows they count from): turned into rows all at once when
        the rows are counted (a loop over experts gathers hundreds of times; one vectorized pass costs less), or
        once they hold PENDING_GATHERED positions (a loop gathering a large index per step keeps no more)."""
        self._pending = 0

    def add(self, rows: range) -> None:
        if len(rows) and (rows.step == 1 or len(rows) == 1):
            self._ranges.append((rows[0], rows[-1] + 1))
        elif len(rows):
            self._indices.update(rows)

    def add_indices(self, indices) -> None:
        self._indices.update(indices)

    def add_gathered(self, index, rows: range) -> None:
        """The rows at positions `index` (an integer tensor, negative positions from the end) of `rows`."""
        flat = index if index.dim() == 1 else index.reshape(-1)  # one op fewer for the common 1-D index
        self._gathered.append((flat.clone(), rows))
        self._pending += flat.numel()
        if self._pending > PENDING_GATHERED:
            self._fold_gathered()

    def _fold_gathered(self) -> None:
        if self._gathered:
            self._indices.update(_distinct_rows(self._gathered))
            self._gathered, self._pending = [], 0

    def count(self) -> int:
        """Distinct rows read."""
        self._fold_gathered()
        merged: list[tuple[int, int]] = []
        for start, stop in sorted(self._ranges):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
            else:
                merged.append((start, stop))
        starts = [start for start, _ in merged]
        outside = sum(
            1 for i in self._indices if not (position := bisect_right(starts, i)) or i >= merged[position - 1][1]
        )
        return sum(stop - start for start, stop in merged) + outside


def _distinct_rows(gathered: list[tuple[Any, range]]) -> list[int]:
    """The distinct input rows of `RowSet.add_gathered`'s entries, as `range` indexing maps each position (IndexError
    for one outside its rows). The entries that count from the same rows (a loop's gathers from one input, hundreds
    of them) are mapped together: a few ops per range of rows instead of per entry."""
    import torch

    by_rows: dict[range, list] = {}
    for index, rows in gathered:
        by_rows.setdefault(rows, []).append(index)
    mapped = []
    with at_most_threads(1):  # thousands of row numbers: OpenMP's fork and join (and a busy core) cost more
        for rows, indices in by_rows.items():
            positions = torch.cat([i if i.dtype == torch.int64 else i.to(torch.int64) for i in indices])
            if positions.numel() and not -len(rows) <= int(positions.min()) <= int(positions.max()) < len(rows):
                raise IndexError(f"a gathered position outside the {len(rows)} rows it counts from")
            positions = torch.where(positions < 0, positions + len(rows), positions)
            mapped.append(positions * rows.step + rows.start)
        return torch.unique(torch.cat(mapped)).tolist()
