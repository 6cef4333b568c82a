"""Recording a reference's ATen operations with their shapes and dtypes, without computing them.

The reference runs on fake tensors (shapes, dtypes and devices, no data) under a dispatch mode
that sees every ATen call. Each call is costed by its rule as it happens, while the recorder
tracks what cost rules cannot see locally: which precision each tensor's values came from
(dequantization), and which graph inputs are only gathered from (compulsory bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from solbench.sol.costs import PRECISION_RANK, OpCost, precision_of
from solbench.sol.masks import MaskTracker
from solbench.sol.rules import GATHER_OPS, POINTWISE_COST, OpCall, flatten, io_bytes, rule_for

# Ops whose output carries the precision its main input came from.
_PASS_THROUGH = {"_to_copy", "copy", "clone", "contiguous", "expand", "repeat", "repeat_interleave", "cat",
                 "stack", "index_select", "gather", "embedding", "index", "_unsafe_index", "view", "_unsafe_view",
                 "reshape", "permute", "transpose", "t", "squeeze", "unsqueeze", "slice", "select", "flatten",
                 "unflatten", "as_strided", "alias", "detach", "tile", "narrow", "unfold"}
_CREATION = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
             "new_zeros", "full", "full_like", "new_full", "ones", "ones_like", "new_ones"}


@dataclass(frozen=True)
class RecordedOp:
    name: str
    cost: OpCost
    shapes: str
    covered: bool


@dataclass
class Recording:
    ops: list[RecordedOp] = field(default_factory=list)
    input_bytes: dict[int, int] = field(default_factory=dict)
    """Graph input position -> bytes it occupies."""
    gathered_bytes: dict[int, int] = field(default_factory=dict)
    """Graph input position -> bytes read by gathers, for inputs used only by gathers."""
    fully_read: set[int] = field(default_factory=set)
    output_bytes: int = 0
    opaque_outputs: list[str] = field(default_factory=list)
    """Outputs that no ATen op wrote (a custom kernel filled them): their compute is unknown."""


def _dispatch_mode_base():
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode


class OpRecorder(_dispatch_mode_base()):
    def __init__(self, inputs: list):
        super().__init__()
        import torch

        self.recording = Recording()
        self.masks = MaskTracker()
        self._keep: list[Any] = []  # keeps tensors alive so their id() stays theirs
        self._origin: dict[int, str] = {}
        self._root: dict[int, int] = {}
        self._producer: dict[int, str] = {}
        self._base: dict[int, int] = {}
        for position, value in enumerate(inputs):
            if isinstance(value, torch.Tensor):
                self._track(value, precision_of(value.dtype), root=position)
                self.recording.input_bytes[position] = value.numel() * value.element_size()

    def _track(self, tensor, origin: str, root: int | None = None, producer: str | None = None) -> None:
        self._keep.append(tensor)
        self._origin[id(tensor)] = origin
        if root is not None:
            self._root[id(tensor)] = root
        if producer is not None:
            self._producer[id(tensor)] = producer

    def origin_of(self, tensor) -> str:
        return self._origin.get(id(tensor), precision_of(tensor.dtype))

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        import torch

        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if func.namespace == "prim":
            return result
        outputs = [o for o in (result if isinstance(result, (tuple, list)) else [result])
                   if isinstance(o, torch.Tensor)]
        call = OpCall(name=name, args=args, kwargs=kwargs, outputs=outputs, operand_precision=self.origin_of)
        self._note_input_uses(name, func, args, kwargs, outputs)
        self._propagate(name, func, args, kwargs, outputs)
        if func._schema.is_mutable and args and isinstance(args[0], torch.Tensor):
            written = args[0]
            self._producer[self._base.get(id(written), id(written))] = name
        rule = rule_for(name, func.tags)
        if rule is None:
            read, written = io_bytes(call)
            cost, covered = OpCost(bytes_read=read, bytes_written=written, formula="no rule: memory only"), False
        else:
            cost, covered = rule(call), True
        shapes = " ".join(f"{list(a.shape)}:{str(a.dtype).removeprefix('torch.')}" for a in args
                          if isinstance(a, torch.Tensor))
        index = len(self.recording.ops)
        self.recording.ops.append(RecordedOp(name=name, cost=cost, shapes=shapes, covered=covered))
        self._apply_masks(name, args, kwargs, outputs, index)
        return result

    def _apply_masks(self, name, args, kwargs, outputs, index) -> None:
        """Scale matrix work by the share of attention pairs a hand-written triangular mask keeps."""
        factor = self.masks.operand_factor(name, args)
        if factor < 1:
            self._scale_op(index, factor, "operand is masked attention probabilities")
        masked = self.masks.observe(name, args, kwargs, outputs, index)
        if masked is not None:
            self._scale_op(*masked, "its scores are masked afterwards")

    def _scale_op(self, index: int, kept: float, why: str) -> None:
        op = self.recording.ops[index]
        cost = op.cost
        scaled = replace(cost, matrix_flops={p: f * kept for p, f in cost.matrix_flops.items()},
                         formula=f"{cost.formula}; x {kept:.4f} of the pairs: {why}")
        self.recording.ops[index] = replace(op, cost=scaled)

    def _note_input_uses(self, name, func, args, kwargs, outputs) -> None:
        import torch

        tensors = [(i, a) for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        tensors += [(-1, a) for v in kwargs.values() for a in (v if isinstance(v, (list, tuple)) else [v])
                    if isinstance(a, torch.Tensor)]
        if name == "index":  # aten.index(self, indices): the index tensors arrive as a list
            tensors += [(-1, a) for a in (args[1] if len(args) > 1 else []) if isinstance(a, torch.Tensor)]
        for position, tensor in tensors:
            root = self._root.get(id(tensor))
            if root is None or func.is_view:
                continue
            if name in GATHER_OPS and position == GATHER_OPS[name] and outputs:
                touched = outputs[0].numel() * tensor.element_size()
                self.recording.gathered_bytes[root] = self.recording.gathered_bytes.get(root, 0) + touched
            else:
                self.recording.fully_read.add(root)

    def _propagate(self, name, func, args, kwargs, outputs) -> None:
        import torch

        sources = [a for a in flatten(args) if isinstance(a, torch.Tensor)]  # cat/stack take lists
        if name in ("index", "_unsafe_index") and len(args) > 1:
            # A table lookup's values carry the information of its indices (e.g. 4-bit codes -> E2M1 values).
            sources = [args[0]] + [a for a in args[1] if isinstance(a, torch.Tensor)]
        for out in outputs:
            root = self._root.get(id(sources[0])) if func.is_view and sources else None
            if name in _PASS_THROUGH or torch.Tag.pointwise in func.tags or name in POINTWISE_COST:
                same_size = [s for s in sources if s.numel() == out.numel()] or sources
                origins = [self.origin_of(s) for s in same_size if self.origin_of(s) not in ("int", "bool")]
                origin = min(origins, key=lambda p: PRECISION_RANK.get(p, 3)) if origins else precision_of(out.dtype)
                if PRECISION_RANK.get(precision_of(out.dtype), 3) < PRECISION_RANK.get(origin, 3):
                    origin = precision_of(out.dtype)
            else:
                origin = precision_of(out.dtype)
            if func.is_view and sources:
                self._base[id(out)] = self._base.get(id(sources[0]), id(sources[0]))
            self._track(out, origin, root=root, producer=name if not func.is_view else
                        self._producer.get(id(sources[0])) if sources else name)

    def finish(self, outputs: list) -> Recording:
        """Account the returned outputs: written once each (aliases once), flagged when no ATen op produced them."""
        seen: set[int] = set()
        for index, out in enumerate(outputs):
            identity = self._base.get(id(out), id(out))
            if identity in seen:
                continue
            seen.add(identity)
            self.recording.output_bytes += out.numel() * out.element_size()
            producer = self._producer.get(self._base.get(id(out), id(out)), self._producer.get(id(out)))
            if producer in _CREATION:
                self.recording.opaque_outputs.append(f"output {index} was allocated by {producer} and written "
                                                     "outside ATen (a custom kernel): its work is not counted")
        return self.recording


def compulsory_bytes(recording: Recording) -> int:
    """Each graph input read once (only the gathered rows of inputs used only by gathers), each output written once."""
    total = recording.output_bytes
    for position, size in recording.input_bytes.items():
        if position in recording.fully_read:
            total += size
        elif position in recording.gathered_bytes:
            total += min(size, recording.gathered_bytes[position])
    return total


def total_cost(recording: Recording) -> OpCost:
    total = OpCost()
    for op in recording.ops:
        total = total + op.cost
    return total


def arithmetic_intensity(flops: float, bytes_moved: int) -> float:
    return flops / bytes_moved if bytes_moved else math.inf
