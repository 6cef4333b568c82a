"""Attention masks written by hand: pairs a triangular mask removes are not work a kernel must do.

A reference may build causal attention itself: scores = q @ k^T, a mask from triu/tril, then
masked_fill/where/add with -inf, softmax, @ v. Counting both products in full would put T_SOL
above what a kernel that skips masked blocks needs, so T_SOL would no longer be a lower bound.
This tracker follows the mask's structure (the share of nonzero entries of a triu/tril result),
learns which share of pairs the masking keeps, and scales the products on either side of it.
"""

from __future__ import annotations

import math

_FOLLOW = {
    "_to_copy",
    "to",
    "clone",
    "contiguous",
    "expand",
    "view",
    "_unsafe_view",
    "reshape",
    "unsqueeze",
    "squeeze",
    "permute",
    "transpose",
    "alias",
    "detach",
    "slice",
    "select",
    "repeat",
    "lift_fresh_copy",
}
_KEEPS_PAIRS = _FOLLOW | {
    "_softmax",
    "_log_softmax",
    "mul",
    "div",
    "exp",
    "sub",
    "add",
    "native_dropout",
    "dropout",
    "_safe_softmax",
}
_MATRIX = {"mm", "bmm", "baddbmm", "addmm", "matmul"}
_STARTS = {"tril", "triu"} | _MATRIX
"""Ops that start tracking; every other branch needs a tensor tracked already."""
_OBSERVED = _STARTS | _KEEPS_PAIRS | {"logical_not", "bitwise_not", "eq", "masked_fill", "where"}
"""Every op a branch of `MaskTracker.observe` handles (by name): for any other, it tracks nothing and returns None."""
_NEGATIVE_ENOUGH = -1e4  # fill values at or below this remove the pair from the softmax


def _triangle_nonzero(rows: int, columns: int, diagonal: int, lower: bool) -> float:
    if rows * columns == 0:
        return 0.0
    if lower:
        kept = sum(min(max(i + diagonal + 1, 0), columns) for i in range(rows))
    else:
        kept = sum(columns - min(max(i + diagonal, 0), columns) for i in range(rows))
    return kept / (rows * columns)


class MaskTracker:
    def __init__(self):
        self.nonzero: dict[int, float] = {}
        """Tensor id -> share of entries that are structurally nonzero (True, or -inf in a bias)."""
        self.kept: dict[int, float] = {}
        """Tensor id -> share of (query, key) pairs still in play after masking."""
        self.producer: dict[int, int] = {}
        """Tensor id -> index of the matrix op its values come from (through elementwise ops)."""

    def operand_factor(self, name: str, args) -> float:
        """For a matrix op: the share of work left when an operand carries masked-out pairs."""
        if name not in _MATRIX:
            return 1.0
        factors = [self.kept[id(a)] for a in args if id(a) in self.kept]
        return min(factors) if factors else 1.0

    def observe(self, name: str, args, kwargs, outputs, op_index: int) -> tuple[int, float] | None:
        """Track structure through this op; returns (earlier matrix op, kept share) when this op masks scores."""
        if (
            not outputs
            or name not in _OBSERVED
            or (name not in _STARTS and not (self.nonzero or self.kept or self.producer))
        ):
            return None  # an op no branch below handles, or nothing tracked yet and no op that starts tracking
        import torch

        out = outputs[0]
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        if name in ("tril", "triu") and tensors and tensors[0].dim() >= 2:
            diagonal = int(args[1]) if len(args) > 1 else int(kwargs.get("diagonal", 0))
            rows, columns = tensors[0].shape[-2], tensors[0].shape[-1]
            self.nonzero[id(out)] = _triangle_nonzero(rows, columns, diagonal, lower=name == "tril")
            return None
        if name in ("logical_not", "bitwise_not") and tensors and id(tensors[0]) in self.nonzero:
            self.nonzero[id(out)] = 1 - self.nonzero[id(tensors[0])]
            return None
        if name == "eq" and tensors and id(tensors[0]) in self.nonzero and len(args) > 1 and args[1] == 0:
            self.nonzero[id(out)] = 1 - self.nonzero[id(tensors[0])]
            return None
        if name in _FOLLOW and tensors and id(tensors[0]) in self.nonzero:
            self.nonzero[id(out)] = self.nonzero[id(tensors[0])]
        kept = self._kept_after_masking(name, args, tensors)
        if kept is not None:
            scores = tensors[0] if name != "where" else (args[1] if _is_negative_fill(args[2]) else args[2])
            self.kept[id(out)] = kept
            earlier = self.producer.get(id(scores))
            if earlier is not None:
                self.producer[id(out)] = earlier
                return earlier, kept
            return None
        if name in _MATRIX:
            self.producer[id(out)] = op_index
            return None
        same_size = [t for t in tensors if t.numel() == out.numel()]
        if name in _KEEPS_PAIRS and same_size:
            kept_values = [self.kept[id(t)] for t in same_size if id(t) in self.kept]
            if kept_values:
                self.kept[id(out)] = min(kept_values)
            producers = [self.producer[id(t)] for t in same_size if id(t) in self.producer]
            if producers:
                self.producer[id(out)] = producers[0]
        return None

    def _kept_after_masking(self, name: str, args, tensors) -> float | None:
        if name == "masked_fill" and len(args) > 2 and id(args[1]) in self.nonzero and _is_negative_fill(args[2]):
            return 1 - self.nonzero[id(args[1])]
        if name == "where" and len(args) > 2 and id(args[0]) in self.nonzero:
            if _is_negative_fill(args[2]):
                return self.nonzero[id(args[0])]
            if _is_negative_fill(args[1]):
                return 1 - self.nonzero[id(args[0])]
        if name == "add" and len(tensors) == 2:
            bias = next((t for t in tensors if id(t) in self.nonzero), None)
            if bias is not None and bias.numel() <= max(t.numel() for t in tensors):
                return 1 - self.nonzero[id(bias)]
        return None


def _is_negative_fill(value) -> bool:
    import torch

    if isinstance(value, torch.Tensor):
        return False  # a tensor fill is data, not a known -inf
    return isinstance(value, (int, float)) and (value == -math.inf or value <= _NEGATIVE_ENOUGH)
