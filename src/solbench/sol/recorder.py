"""Recording a reference's ATen operations with their shapes and dtypes, without computing them.

The reference runs on fake tensors (shapes, dtypes and devices, no data) under a dispatch mode
that sees every ATen call. Each call is costed by its rule as it happens, while the recorder
tracks what cost rules cannot see locally: which precision each tensor's values came from
(dequantization), and which rows of each graph input some op reads (compulsory bytes).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, NamedTuple

import torch

from solbench.sol.costs import PRECISION_RANK, OpCost, precision_of
from solbench.sol.errors import ValuesNeeded
from solbench.sol.masks import MaskTracker
from solbench.sol.rows import InputRows, RowSet, gather_index, gathered_rows, view_rows
from solbench.sol.rules import GATHER_OPS, MATRIX_RULES, POINTWISE_COST, OpCall, flatten, io_bytes, rule_for

# Ops whose output carries the precision its main input came from.
_PASS_THROUGH = {
    "_to_copy",
    "copy",
    "clone",
    "contiguous",
    "expand",
    "repeat",
    "repeat_interleave",
    "cat",
    "stack",
    "index_select",
    "gather",
    "embedding",
    "index",
    "_unsafe_index",
    "view",
    "_unsafe_view",
    "reshape",
    "permute",
    "transpose",
    "t",
    "squeeze",
    "unsqueeze",
    "slice",
    "select",
    "flatten",
    "unflatten",
    "as_strided",
    "alias",
    "detach",
    "tile",
    "narrow",
    "unfold",
}
_GROUPED = {"_grouped_mm": (2, (1,)), "_scaled_grouped_mm": (4, (1, 3))}
"""Grouped GEMMs: argument position of the offsets, and positions of the per-group operands."""
_CREATION = {
    "empty",
    "empty_like",
    "empty_strided",
    "new_empty",
    "new_empty_strided",
    "zeros",
    "zeros_like",
    "new_zeros",
    "full",
    "full_like",
    "new_full",
    "ones",
    "ones_like",
    "new_ones",
}


class RecordedOp(NamedTuple):
    """One recorded ATen call (a named tuple, not a frozen dataclass: one is made per op, and a frozen
    dataclass costs several times more to build)."""

    name: str
    cost: OpCost
    operands: tuple
    """(shape, dtype) of each tensor argument, formatted into `shapes` only when a table asks for it."""
    covered: bool

    @property
    def shapes(self) -> str:
        return " ".join(f"{list(shape)}:{str(dtype).removeprefix('torch.')}" for shape, dtype in self.operands)


@dataclass
class Recording:
    ops: list[RecordedOp] = field(default_factory=list)
    input_bytes: dict[int, int] = field(default_factory=dict)
    """Graph input position -> bytes it occupies."""
    rows_read: dict[int, RowSet] = field(default_factory=dict)
    """Graph input position -> the rows (indices along dim 0) that ops with a nonempty result read."""
    gathered_bytes: dict[int, int] = field(default_factory=dict)
    """Graph input position -> bytes read by gathers whose indices are unknown (fake tensors)."""
    output_bytes: int = 0
    opaque_outputs: list[str] = field(default_factory=list)
    """Outputs that no ATen op wrote (a custom kernel filled them): their compute is unknown."""
    finished: bool = False
    """Set by `OpRecorder.finish`: nothing records into it any more."""
    _totals: tuple[OpCost, int] | None = field(default=None, repr=False, compare=False)

    def totals(self) -> tuple[OpCost, int]:
        """(`total_cost`, `compulsory_bytes`), worked out once the recording is finished: the analysis compares two
        input draws' totals and then takes the least, and a loop recorded thousands of times is a long list to add
        up. Before then (ops may still be appended) worked out at each call."""
        if self._totals is not None:
            return self._totals
        totals = (total_cost(self), compulsory_bytes(self))
        if self.finished:
            self._totals = totals
        return totals


@dataclass(frozen=True)
class _OpInfo:
    """What the recorder needs to know about an ATen overload, worked out once per overload: a reference
    that loops in Python calls the same few overloads thousands of times."""

    name: str
    recorded: bool
    """False for `prim` ops (they stand for ATen ops that are recorded themselves)."""
    is_view: bool
    is_mutable: bool
    carries_precision: bool
    """The output carries the precision its main input came from (copies, views, elementwise ops)."""
    rule: Callable | None
    matrix: bool
    """A matrix rule: its cost also depends on the precision the operands came from."""
    gather_position: int | None
    grouped: bool


@cache
def _op_info(func) -> _OpInfo:
    name = func.overloadpacket.__name__
    return _OpInfo(
        name=name,
        recorded=func.namespace != "prim",
        is_view=func.is_view,
        is_mutable=func._schema.is_mutable,
        carries_precision=name in _PASS_THROUGH or torch.Tag.pointwise in func.tags or name in POINTWISE_COST,
        rule=rule_for(name, func.tags),
        matrix=name in MATRIX_RULES,
        gather_position=GATHER_OPS.get(name),
        grouped=name in _GROUPED,
    )


_precision = precision_of


def _dispatch_mode_base():
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode


class OpRecorder(_dispatch_mode_base()):
    """Records and costs every ATen call. With `values` (a HybridMode), the recorder computes each result
    through that mode's rules itself rather than stacking a second dispatch mode under it: one Python
    dispatch per op instead of two."""

    def __init__(
        self,
        inputs: list,
        values=None,
        loop_shortcuts: bool = True,
        loop_templates: bool = True,
        routed_templates=None,
        costs: dict | None = None,
    ):
        super().__init__()
        self.loop_shortcuts = loop_shortcuts
        """Whether shortcut loops (sol/loops.py) may skip the iterations that repeat."""
        self.loop_templates = loop_templates and values is not None
        """Whether routed loops (sol/routed.py) may cost an iteration from a template instead of running it: only
        under a values mode, which the template's replay computes the real and view ops through."""
        self.routed_templates = routed_templates
        """Where routed loops keep their templates across the runs of one problem's analysis (a `RoutedTemplates`,
        sol/routed.py), or None: each loop learns its own."""
        self.trace: list[TracedCall] | None = None
        """While a routed loop records a template: every ATen call, in order (sol/routed.py)."""
        self.trace_index: dict[int, str] | None = None
        """While a routed loop's subscript by an index variable runs: that variable's value -> its name."""
        self.mask_scalings = 0
        """Ops scaled by mask tracking so far (a template must scale none)."""
        self.python_value_reads = 0
        """Values read into Python without an ATen call (`tolist`, `numpy`), counted by `FusedAttention`."""
        self.loop_events = 0
        """Ops a loop shortcut cannot repeat blindly (partial or gathered input reads, masks reaching back, and
        while a loop is probed: values read or computed for real): a probed iteration must add none."""
        self.loop_floor = 0
        """Index of the first op of the loop iteration being probed."""
        self._probing = 0
        self.recording = Recording()
        self.masks = MaskTracker()
        self._values = values
        self._keep: list[Any] = []  # keeps tensors alive so their id() stays theirs
        self._origin: dict[int, str] = {}
        self._rows: dict[int, InputRows] = {}
        self._producer: dict[int, str] = {}
        self._base: dict[int, int] = {}
        self._infos: dict[int, _OpInfo] = {}
        self._costs: dict[tuple, OpCost] = costs if costs is not None else {}
        """Signature -> cost, for rules that depend on nothing else (see `_cost`); `costs`, where given, is shared with
        the other runs of one problem's analysis (whose draws and workloads repeat most signatures)."""
        self._paused = False
        for position, value in enumerate(inputs):
            if isinstance(value, torch.Tensor):
                rows = value.shape[0] if value.dim() else 1
                self._track(value, _precision(value.dtype), rows=InputRows(position, range(rows), True))
                self.recording.input_bytes[position] = value.numel() * value.element_size()
                self.recording.rows_read[position] = RowSet(rows)

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # nothing is compiled under the recorder: skip torch's per-call dynamo guard

    def _track(self, tensor, origin: str, rows: InputRows | None = None, producer: str | None = None) -> None:
        self._keep.append(tensor)
        self._origin[id(tensor)] = origin
        if rows is not None:
            self._rows[id(tensor)] = rows
        if producer is not None:
            self._producer[id(tensor)] = producer

    def adopt(self, tensor, origin: str) -> None:
        """`tensor`, made under another recorder, carries the precision `origin` here where this one never saw it: a
        routed loop's template stand-in (sol/routed.py), whose replay's bookkeeping reads it as its recording's did."""
        if id(tensor) not in self._origin:
            self._track(tensor, origin)

    def origin_of(self, tensor) -> str:
        origin = self._origin.get(id(tensor))
        return origin if origin is not None else _precision(tensor.dtype)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        values = self._values
        result = values.compute(func, types, args, kwargs) if values is not None else func(*args, **kwargs)
        info = self._infos.get(id(func))  # overloads live as long as torch: their id is theirs
        if info is None:
            info = self._infos[id(func)] = _op_info(func)
        if self.trace is not None:
            self._trace_call(func, info, args, kwargs, result)
        if self._paused or not info.recorded:
            return result
        if self._probing and _reads_values(info.name, args, kwargs, result):
            self.loop_events += 1
        self._record(func, info, args, kwargs, result)
        return result

    def loop_probe_begin(self) -> tuple[int, int]:
        """A shortcut loop starts probing its iterations (see sol/loops.py); returns what `loop_probe_end` restores."""
        self._probing += 1
        return self._probing - 1, self.loop_floor

    def loop_probe_end(self, outer: tuple[int, int]) -> None:
        self._probing, self.loop_floor = outer

    def loop_fingerprint(self, tensor, before: set[int], labels: dict, start: int) -> tuple:
        """What the rest of a recording can tell about `tensor` (as part of a loop's state): its shape, strides and
        dtype, kind (meta, fake or real), the precision it carries, the input rows it views, the op that wrote
        it, its mask tracking, and its aliasing: the same object before the loop (`before`), or the k-th new
        storage met (`labels`). Ops' indices count from the iteration's `start`."""
        from torch._subclasses.fake_tensor import is_fake

        key = id(tensor)
        root = self._base.get(key, key)
        if root in before or key in before:
            alias = ("before", root)
        else:
            alias = labels.setdefault(root, ("new", len(labels)))
        producer = self.masks.producer.get(key)
        if producer is not None:
            producer = ("in", producer - start) if producer >= start else ("at", producer)
        kind = "meta" if tensor.is_meta else "fake" if is_fake(tensor) else "real"
        stale = self._values is not None and self._values.is_stale(tensor)
        return (
            kind,
            tuple(tensor.shape),
            tensor.stride(),
            tensor.dtype,
            alias,
            self.origin_of(tensor),
            self._rows.get(key),
            self._producer.get(root, self._producer.get(key)),
            self.masks.nonzero.get(key),
            self.masks.kept.get(key),
            producer,
            stale,
        )

    @contextmanager
    def paused(self):
        """Ops run, and are not recorded: a composite recorded as one op (`record_composite`) runs its parts."""
        self._paused = True
        try:
            yield
        finally:
            self._paused = False

    def record_composite(self, func, args: tuple, kwargs: dict, result) -> None:
        """Record `result` as made by one call of the ATen overload `func`, whose parts ran `paused`."""
        if self.trace is not None:
            self._trace_call(func, _op_info(func), args, kwargs, result, composite=True)
        self._record(func, _op_info(func), args, kwargs, result)

    def _trace_call(self, func, info: _OpInfo, args, kwargs, result, composite: bool = False) -> None:
        variables = None
        if self.trace_index and info.name == "select" and len(args) > 2 and type(args[2]) is int:
            name = self.trace_index.get(args[2])
            variables = {2: name} if name is not None else None
        self.trace.append(  # type: ignore[union-attr]  (checked by the caller)
            TracedCall(
                func,
                info,
                args,
                kwargs,
                result,
                variables,
                self._paused or composite,
                _tracked(self._rows, (*args, *kwargs.values())),
            )
        )

    def _record(self, func, info: _OpInfo, args, kwargs, result) -> None:
        outputs = _outputs(result)
        name = info.name
        self.bookkeep(info, args, kwargs, outputs)
        cost = self._cost(func, info, args, kwargs, outputs)
        operands = tuple([(a.shape, a.dtype) for a in args if isinstance(a, torch.Tensor)])
        index = len(self.recording.ops)
        self.recording.ops.append(RecordedOp(name=name, cost=cost, operands=operands, covered=info.rule is not None))
        self._apply_masks(name, args, kwargs, outputs, index)

    def bookkeep(self, info: _OpInfo, args, kwargs, outputs: list, *, reads: bool = True, carries: bool = True) -> None:
        """Everything recording an op does besides costing it: the input rows it reads, the precision, rows and
        aliasing its outputs carry, the op that last wrote a tensor. A routed loop's template replays this for
        the ops whose effect depends on the iteration (sol/routed.py), skipping the parts it has shown to have none:
        `reads` (no argument views an input) and `carries` (the outputs are fresh tensors nothing will ask about)."""
        if reads:
            self._note_input_uses(info, args, kwargs, outputs)
        if carries:
            self._propagate(info, args, outputs)
        if info.is_mutable and args and isinstance(args[0], torch.Tensor):
            written = args[0]
            self._producer[self._base.get(id(written), id(written))] = info.name
            values = self._values
            if carries and outputs and values is not None and values.is_twin(written, outputs[0]):
                # written with shape-only values, the real tensor returned its twin: it holds what the twin does
                self._track(written, self.origin_of(outputs[0]))

    def is_tracked(self, tensor) -> bool:
        """`tensor` views rows of a graph input."""
        return id(tensor) in self._rows

    def rows_of(self, tensor) -> InputRows | None:
        return self._rows.get(id(tensor))

    def producer_of(self, tensor) -> str | None:
        """The op that last wrote `tensor` (through any view of its storage)."""
        key = id(tensor)
        return self._producer.get(self._base.get(key, key), self._producer.get(key))

    def root_of(self, tensor) -> int:
        """The id of the tensor whose storage `tensor` views (its own where it is no view)."""
        key = id(tensor)
        return self._base.get(key, key)

    def _cost(self, func, info: _OpInfo, args, kwargs, outputs: list) -> OpCost:
        """The op's cost by its rule (memory only without one). Every rule but the matrix ones depends only on
        the overload, the arguments' shapes, dtypes and values and the outputs' shapes and dtypes: those
        costs are kept per such signature, since a reference looping in Python repeats a few of them
        thousands of times."""
        rule = info.rule or _memory_only
        key = None if info.matrix else _signature(func, args, kwargs, outputs)
        cost = self._costs.get(key) if key is not None else None
        if cost is None:
            call = OpCall(name=info.name, args=args, kwargs=kwargs, outputs=outputs, operand_precision=self.origin_of)
            cost = rule(call)
            if key is not None:
                self._costs[key] = cost
        return cost

    def _apply_masks(self, name, args, kwargs, outputs, index) -> None:
        """Scale matrix work by the share of attention pairs a hand-written triangular mask keeps."""
        factor = self.masks.operand_factor(name, args)
        if factor < 1:
            self.mask_scalings += 1
            self._scale_op(index, factor, "operand is masked attention probabilities")
        masked = self.masks.observe(name, args, kwargs, outputs, index)
        if masked is not None and masked[0] < self.loop_floor:
            self.loop_events += 1  # a mask scales an op recorded before this loop iteration
        if masked is not None:
            self.mask_scalings += 1
            self._scale_op(*masked, "its scores are masked afterwards")

    def _scale_op(self, index: int, kept: float, why: str) -> None:
        op = self.recording.ops[index]
        cost = op.cost
        scaled = replace(
            cost,
            matrix_flops={p: f * kept for p, f in cost.matrix_flops.items()},
            formula=f"{cost.formula}; x {kept:.4f} of the pairs: {why}",
        )
        self.recording.ops[index] = op._replace(cost=scaled)

    def _note_input_uses(self, info: _OpInfo, args, kwargs, outputs) -> None:
        """Note the rows of graph inputs this op reads; an op with an empty result needs none of its inputs."""
        if info.is_view:
            return
        uses = _tracked_uses(self._rows, args, kwargs)
        if not uses or (outputs and all(o.numel() == 0 for o in outputs)):
            return  # (`_groups_used` finds no group either where no per-group operand is tracked)
        name = info.name
        groups = self._groups_used(name, args, kwargs) if info.grouped else {}
        for position, tensor, where in uses:
            read = self.recording.rows_read[where.root]
            if position in groups and where.leading:
                self.loop_events += 1
                read.add_indices(where.rows[group] for group in groups[position])
            elif info.gather_position == position and outputs:
                self.loop_events += 1
                rows = self._gathered_rows(name, args) if where.leading else None
                if rows is None:
                    touched = outputs[0].numel() * tensor.element_size()
                    self.recording.gathered_bytes[where.root] = (
                        self.recording.gathered_bytes.get(where.root, 0) + touched
                    )
                else:
                    read.add_gathered(rows, where.rows)
            else:
                if len(where.rows) != read.total:
                    self.loop_events += 1  # some rows only: which ones may depend on the loop variable
                read.add(where.rows)

    def _gathered_rows(self, name, args):
        """The positions a gather reads, as an integer tensor (`RowSet` maps them to rows when it counts), or None.
        Where no real argument is stale, its real index tensor (whose values are the same outside the values mode);
        else `gathered_rows` under the mode, which reads the index's values as the reference would (dispatching once
        per element, so only then)."""
        values = self._values
        if values is None or not values.has_stale() or not any(values.is_stale(t) for t in _tensor_arguments(args)):
            return gather_index(name, args)
        rows = self._with_values(gathered_rows, name, args)
        return None if rows is None else torch.tensor(rows, dtype=torch.int64)

    def _with_values(self, function, *args):
        """Call `function` (which may run ops on the arguments' values) as it would run inside the reference:
        under the values mode, where there is one."""
        if self._values is None:
            return function(*args)
        with self._values:
            return function(*args)

    def _groups_used(self, name, args, kwargs) -> dict[int, list[int]]:
        """For a grouped GEMM over row groups (2-D rows x 3-D per-group weights): per-group operand
        position -> the groups owning at least one row. Which they are depends on the offsets' values."""
        from torch._subclasses.fake_tensor import is_fake

        offsets_at, per_group = _GROUPED[name]
        if args[0].dim() != 2 or args[1].dim() != 3:
            return {}
        offsets = kwargs.get("offs", args[offsets_at] if len(args) > offsets_at else None)
        if offsets is None or not any(p < len(args) and id(args[p]) in self._rows for p in per_group):
            return {}
        if is_fake(offsets) or offsets.is_meta:
            raise ValuesNeeded(f"{name}: which groups' weights are read depends on the values of its offsets")
        used, start = [], 0
        for group, end in enumerate(self._with_values(offsets.tolist)):
            if end > start:
                used.append(group)
            start = max(start, end)
        return {position: used for position in per_group}

    def _propagate(self, info: _OpInfo, args, outputs) -> None:
        """The precision, input rows, aliasing and producer each output carries. Runs for every op recorded and every
        step a routed loop's template replays: `_track` and the recorder's look-ups are inlined."""
        name, is_view = info.name, info.is_view
        if name in ("index", "_unsafe_index") and len(args) > 1:
            # A table lookup's values carry the information of its indices (e.g. 4-bit codes -> E2M1 values).
            sources = [args[0]] + [a for a in args[1] if isinstance(a, torch.Tensor)]
        else:
            sources = _tensor_arguments(args)  # cat/stack take lists
        first = id(sources[0]) if sources else None
        source_rows = self._rows.get(first) if is_view and first is not None else None
        carries = info.carries_precision
        keep, origins, rows_of, producers, bases = self._keep, self._origin, self._rows, self._producer, self._base
        for piece, out in enumerate(outputs):
            out_precision = _precision(out.dtype)
            origin = self._carried_origin(sources, out, out_precision) if carries else out_precision
            key = id(out)
            if is_view and first is not None:
                bases[key] = bases.get(first, first)
                producer = producers.get(first)
            else:
                producer = name
            keep.append(out)  # `_track`, inlined
            origins[key] = origin
            if source_rows is not None:
                rows_of[key] = view_rows(
                    name,
                    args,
                    sources[0],
                    source_rows,
                    out,
                    piece,
                    outputs,
                    self.recording.rows_read[source_rows.root].total,
                )
            if producer is not None:
                producers[key] = producer

    def _carried_origin(self, sources, out, out_precision: str) -> str:
        """The least precision among the same-sized sources (all sources when none is), ignoring integers
        and booleans, and never above the output's own."""
        size = out.numel()
        same_size = [s for s in sources if s.numel() == size] or sources
        origin, best = None, None
        origins = self._origin
        for source in same_size:
            candidate = origins.get(id(source))  # `origin_of`, inlined: called per op
            if candidate is None:
                candidate = _precision(source.dtype)
            if candidate == "int" or candidate == "bool":
                continue
            rank = PRECISION_RANK.get(candidate, 3)
            if best is None or rank < best:
                origin, best = candidate, rank
        if origin is None:
            return out_precision
        assert best is not None  # set together with origin
        return out_precision if PRECISION_RANK.get(out_precision, 3) < best else origin

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
                self.recording.opaque_outputs.append(
                    f"output {index} was allocated by {producer} and written "
                    "outside ATen (a custom kernel): its work is not counted"
                )
        self.recording.finished = True
        return self.recording


class TracedCall(NamedTuple):
    """One ATen call made while a routed loop records a template (sol/routed.py)."""

    func: Any
    info: _OpInfo
    args: tuple
    kwargs: dict
    result: Any
    variables: dict[int, str] | None
    """Argument position -> name of the loop's index variable whose value that argument is."""
    unrecordable: bool
    """Made inside a composite (its parts ran paused) or recorded as one: no template replays it."""
    tracked: bool
    """Some tensor argument views rows of a graph input (when the call was made)."""


def _outputs(result) -> list:
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [o for o in result if isinstance(o, torch.Tensor)]
    return []


def _tracked_uses(rows: dict, args, kwargs) -> list:
    """(argument position, tensor, the input rows it views) for each tensor argument that views a graph input,
    lists included (cat's and stack's tensors, index's indices); position -1 for keyword arguments."""
    uses = []
    for position, value in enumerate(args):
        if isinstance(value, torch.Tensor):
            where = rows.get(id(value))
            if where is not None:
                uses.append((position, value, where))
        elif isinstance(value, (list, tuple)):
            uses.extend((position, a, rows[id(a)]) for a in value if isinstance(a, torch.Tensor) and id(a) in rows)
    for value in kwargs.values():
        if isinstance(value, torch.Tensor):
            where = rows.get(id(value))
            if where is not None:
                uses.append((-1, value, where))
        elif isinstance(value, (list, tuple)):
            uses.extend((-1, a, rows[id(a)]) for a in value if isinstance(a, torch.Tensor) and id(a) in rows)
    return uses


def _tracked(rows: dict, args) -> bool:
    for value in args:
        if isinstance(value, torch.Tensor):
            if id(value) in rows:
                return True
        elif isinstance(value, (list, tuple)):
            if any(isinstance(v, torch.Tensor) and id(v) in rows for v in value):
                return True
    return False


_VALUE_READS = {
    "_local_scalar_dense",
    "item",
    "nonzero",
    "unique",
    "_unique2",
    "unique_dim",
    "unique_consecutive",
    "masked_select",
    "bincount",
    "equal",
    "is_nonzero",
    "allclose",
    "repeat_interleave",
    "argwhere",
}
"""Ops whose result depends on their arguments' values (a Python number, a data-dependent shape)."""


def _reads_values(name: str, args, kwargs, result) -> bool:
    """While a loop is probed: the op reads values (a value-dependent op, or real tensors among its arguments or
    results), so the iteration's work may depend on data that differ from one iteration to the next."""
    from torch._subclasses.fake_tensor import is_fake

    if name in _VALUE_READS:
        return True
    results = result if isinstance(result, (tuple, list)) else (result,)
    for value in (*args, *kwargs.values(), *results):
        values = value if isinstance(value, (tuple, list)) else (value,)
        for item in values:
            if isinstance(item, torch.Tensor) and not item.is_meta and not is_fake(item):
                return True
    return False


def _memory_only(call: OpCall) -> OpCost:
    read, written = io_bytes(call)
    return OpCost(bytes_read=read, bytes_written=written, formula="no rule: memory only")


def _signature(func, args, kwargs, outputs: list) -> tuple | None:
    """What a non-matrix cost rule reads: the overload, each argument (tensors as shape and dtype, other
    values with their type), the outputs' shapes and dtypes. None where an argument is not hashable."""
    try:
        key = (
            id(func),
            tuple([_argument_signature(a) for a in args]),
            tuple([(name, _argument_signature(a)) for name, a in kwargs.items()]) if kwargs else (),
            tuple([(o.shape, o.dtype) for o in outputs]),
        )
        hash(key)
    except TypeError:
        return None
    return key


def _argument_signature(value):
    if isinstance(value, torch.Tensor):
        return value.shape, value.dtype
    if isinstance(value, (list, tuple)):
        return type(value), tuple(_argument_signature(v) for v in value)
    return type(value), value


def _tensor_arguments(args) -> list:
    """The tensors among an op's arguments, lists included, in order (as `flatten` would find them)."""
    found = []
    for value in args:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(a for a in flatten(value) if isinstance(a, torch.Tensor))
    return found


def compulsory_bytes(recording: Recording) -> int:
    """Each graph input's rows read once (gathers with unknown indices: the bytes they touch), each output
    written once."""
    total = recording.output_bytes
    for position, size in recording.input_bytes.items():
        total += min(size, _read_bytes(recording, position, size))
    return total


def _read_bytes(recording: Recording, position: int, size: int) -> int:
    rows = recording.rows_read[position]
    row_bytes = size // rows.total if rows.total else 0
    return rows.count() * row_bytes + recording.gathered_bytes.get(position, 0)


def total_cost(recording: Recording) -> OpCost:
    """The sum of every op's cost, added in recording order (the same figures as `OpCost.__add__` one op at
    a time, without a new OpCost per op)."""
    matrix: dict[str, float] = {}
    vector: dict[str, float] = {}
    special, read, written = 0.0, 0, 0
    for op in recording.ops:
        cost = op.cost
        for precision, flops in cost.matrix_flops.items():
            matrix[precision] = matrix.get(precision, 0.0) + flops
        for precision, flops in cost.vector_flops.items():
            vector[precision] = vector.get(precision, 0.0) + flops
        special = special + cost.special_ops
        read += cost.bytes_read
        written += cost.bytes_written
    return OpCost(matrix_flops=matrix, vector_flops=vector, special_ops=special, bytes_read=read, bytes_written=written)


def arithmetic_intensity(flops: float, bytes_moved: int) -> float:
    return flops / bytes_moved if bytes_moved else math.inf
