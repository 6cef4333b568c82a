"""Slices run for real: the values of a shape-only tensor, recomputed from the ops that made it.

`HybridMode` keeps GPU-sized floating-point tensors shape-only. Where the work is steered by them (a router's
`hidden @ router_w` -> softmax -> top-k -> the nonzero of an expert mask), a value-dependent op needs values that
no real tensor holds. So the mode logs how each shape-only tensor was made (the op, its arguments, and for a random
factory the random generator's state before the draw), and such values are recomputed on demand: only the ops they
depend on (the router's GEMM and top-k, not the experts), on inputs drawn as the generator's own factory calls draw
them, within SLICE_BYTES_BUDGET and SLICE_FLOPS_BUDGET. Everything else stays shape-only.

The recorder saw each of these ops once, shape-only, when the reference ran them: their recomputation is the
analysis's own work and is never recorded as the reference's. What ran is reported (`SliceCost`).

Values are kept for reuse (a routing loop asks for `expert_mask[e]` once per expert), except a tensor whose storage
some op wrote in place: its value depends on when it is read, so it is recomputed from its producer and every write
before the read, in the order they ran, on one real copy per recomputation. A real (small) tensor the reference
writes in place for real after an op logged it no longer holds what the op read: recomputing from it raises
ValuesNeeded (its version counter says so), as no copy of every small real argument is kept.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple

from solbench.sol.errors import SliceOverBudget, ValuesNeeded

SLICE_BYTES_BUDGET = 256 << 20
"""Most memory a slice's real tensors may hold at once (drawn inputs, intermediates, the values kept for reuse): the
same bound as a whole real run (`REAL_RUN_BUDGET_BYTES`), and drawing that many random values takes a second or
two on one core. A router reads its hidden states: 256 MiB holds 16 Ki tokens of a 7168-wide bf16 model."""
SLICE_FLOPS_BUDGET = 2e10
"""Most FLOPs (by the cost rules) the slices of one input draw may run: about 0.4 s of fp32 matrix work on one
modern CPU core, a router GEMM of 16 Ki tokens x 4096 x 128 experts. A slice beyond either budget is refused with
its size, and the analysis falls back to a whole real run where the inputs are small, or says it cannot."""


@dataclass
class SliceCost:
    """What the slices of one recording ran for real."""

    ops: Counter = field(default_factory=Counter)
    """Op name -> times recomputed (random factories included: the inputs drawn)."""
    values_for: Counter = field(default_factory=Counter)
    """Value-dependent op name -> times its arguments' values came from a slice."""
    flops: float = 0.0
    peak_bytes: int = 0
    """Most bytes the slices' real tensors held at once."""

    def describe(self) -> str:
        ops = ", ".join(f"{name} x{count}" for name, count in sorted(self.ops.items()))
        asked = ", ".join(f"{name} x{count}" for name, count in sorted(self.values_for.items()))
        return (
            f"values for {asked} from a slice run for real ({ops}): "
            f"{self.flops / 1e9:.3g} GFLOP, {self.peak_bytes / 2**20:.3g} MiB"
        )


class _Entry(NamedTuple):
    func: Any
    args: tuple
    kwargs: dict
    outputs: tuple
    """The shape-only tensors the op made (or wrote), in the order its result lists them."""
    rng: Any
    """The random generator's state before a random op ran (None for the others)."""
    versions: tuple[int, ...] = ()
    """The version counter of each real tensor argument when the op ran: one written in place since then no longer
    holds the value the op read."""


class _Plan:
    """The entries (indices into the log) and values one recomputation needs."""

    def __init__(self):
        self.entries: set[int] = set()
        self.leaves: set[int] = set()
        self.kept: dict[int, Any] = {}
        self.flops = 0.0
        self.bytes = 0
        self.by_op: dict[str, list] = {}
        """Op name -> [calls, FLOPs, bytes]: what a refusal names."""

    def heaviest(self, count: int) -> str:
        """The `count` ops that carry most of the FLOPs and bytes, with their calls."""

        def share(item) -> float:
            _, (_, flops, size) = item
            return flops / max(self.flops, 1.0) + size / max(self.bytes, 1)

        ranked = sorted(self.by_op.items(), key=share, reverse=True)
        named = ", ".join(f"{name} x{calls}" for name, (calls, _, _) in ranked[:count])
        return named + (", ..." if len(ranked) > count else "")


class SliceLog:
    """How each shape-only tensor of one hybrid run was made, and the values recomputed from that on demand."""

    def __init__(self, bytes_budget: int | None = None, flops_budget: float | None = None):
        self.bytes_budget = SLICE_BYTES_BUDGET if bytes_budget is None else bytes_budget
        self.flops_budget = SLICE_FLOPS_BUDGET if flops_budget is None else flops_budget
        self.cost = SliceCost()
        self._entries: list[_Entry] = []
        self._made: dict[int, tuple[int, int]] = {}
        """id of a shape-only tensor -> (entry, position among its outputs)."""
        self._root: dict[int, int] = {}
        """id of a view -> id of the tensor whose storage it views (absent: its own)."""
        self._writes: dict[int, list[int]] = {}
        """id of a root -> the entries that wrote its storage in place, in order."""
        self._leaves: dict[int, Any] = {}
        """id of a shape-only twin -> the real tensor it stands for."""
        self._kept: dict[int, Any] = {}
        """id of a shape-only tensor -> its real value (never written in place, so valid whenever read)."""
        self._kept_by_root: dict[int, list[int]] = {}
        self._kept_sizes: dict[int, int] = {}
        """id -> bytes its kept value allocated (0 for a view of another)."""
        self._kept_bytes = 0
        self._keep: list[Any] = []

    # logging, as the hybrid run goes

    def leaf(self, twin, real) -> None:
        """`twin` is the shape-only stand-in of `real` (a large input made shape-only, a tensor written with
        shape-only values): its value is the real tensor's."""
        self._leaves[id(twin)] = real
        self._keep.append(twin)

    def forget_leaf(self, twin_id: int) -> None:
        """The real tensor behind this twin was written with shape-only values through another tensor viewing its
        memory: its data no longer are the twin's values, which then cannot be recomputed."""
        self._leaves.pop(twin_id, None)  # values kept of what was computed from it were computed before: still true

    def log(self, func, args: tuple, kwargs: dict, result, rng=None) -> None:
        """`func(*args, **kwargs)` made or wrote shape-only tensors (`result`); `rng`: the generator's state before
        a random op. Arguments that are real tensors are their own values."""
        import torch

        outputs = tuple(_tensors_of(result))
        index = len(self._entries)
        versions = tuple(t._version for t in _real_tensors(args, kwargs))
        self._entries.append(_Entry(func, args, kwargs, outputs, rng, versions))
        _, view = _aliasing(func)
        written = written_arguments(func, args, kwargs)
        for target in written:
            if isinstance(target, torch.Tensor) and target.is_meta:
                root = self._root_of(target)
                self._writes.setdefault(root, []).append(index)
                self._forget(root)
        base = _first_tensor(args) if view else None
        for position, out in enumerate(outputs):
            if not out.is_meta or any(out is target for target in written):
                continue
            key = id(out)
            self._made[key] = (index, position)
            if base is not None:
                self._root[key] = self._root_of(base)

    def _root_of(self, tensor) -> int:
        key = id(tensor)
        return self._root.get(key, key)

    def _forget(self, root: int) -> None:
        for key in self._kept_by_root.pop(root, ()):
            self._kept.pop(key, None)
            self._kept_bytes -= self._kept_sizes.pop(key, 0)

    def release(self) -> None:
        """Drop the log and the values kept (the run is over); `cost` stays."""
        self._entries.clear()
        self._made.clear()
        self._root.clear()
        self._writes.clear()
        self._leaves.clear()
        self._kept.clear()
        self._kept_by_root.clear()
        self._kept_sizes.clear()
        self._kept_bytes = 0
        self._keep.clear()

    # recomputing on demand

    def values(self, tensors: list, asked_by: str) -> dict[int, Any]:
        """id -> real value of each shape-only tensor in `tensors`, as it is now. Raises `SliceOverBudget` where
        recomputing them would exceed a budget, `ValuesNeeded` where one cannot be recomputed."""
        now = len(self._entries)
        plan = _Plan()
        self._plan(plan, [(t, now) for t in tensors], asked_by)
        flops = self.cost.flops + plan.flops
        held = self._kept_bytes + plan.bytes
        if flops > self.flops_budget or held > self.bytes_budget:
            raise SliceOverBudget(
                f"the values {asked_by} needs come from a slice of {len(plan.entries)} ops ({plan.heaviest(4)}) "
                f"needing {flops / 1e9:.3g} GFLOP and {held / 2**20:.0f} MiB for real, above the slice budget of "
                f"{self.flops_budget / 1e9:.3g} GFLOP and {self.bytes_budget >> 20} MiB"
            )
        real = self._replay(plan)
        self.cost.flops = flops
        self.cost.peak_bytes = max(self.cost.peak_bytes, held)
        self.cost.values_for[asked_by] += 1
        return {id(t): real[id(t)] for t in tensors}

    def _plan(self, plan: _Plan, needs: list, asked_by: str) -> None:
        """Every entry and leaf the values of `needs` ((tensor, time) pairs: its value as it was before entry
        `time` ran) depend on, with what they cost. Iterative: a slice can be thousands of ops deep."""
        import torch

        planned: set[int] = set()
        while needs:
            tensor, time = needs.pop()
            if not isinstance(tensor, torch.Tensor) or not tensor.is_meta:
                continue  # a real tensor is its own value
            key, root = id(tensor), self._root_of(tensor)
            writes = self._writes.get(root)
            if not writes and key in self._kept:
                plan.kept[key] = self._kept[key]
                continue
            if key not in planned:
                planned.add(key)
                if key in self._leaves:
                    plan.leaves.add(key)
                    if writes:  # written in place by the recomputation: a copy
                        plan.bytes += tensor.numel() * tensor.element_size()
                elif key in self._made:
                    self._add_entry(plan, self._made[key][0], needs)
                else:
                    raise ValuesNeeded(
                        f"{asked_by} on a tensor without values whose making was not seen (computed from "
                        "floating-point data)"
                    )
            for write in writes or ():
                if write >= time:
                    break
                self._add_entry(plan, write, needs)

    def _add_entry(self, plan: _Plan, index: int, needs: list) -> None:
        if index in plan.entries:
            return
        plan.entries.add(index)
        entry = self._entries[index]
        flops = _flops(entry)
        written, view = _aliasing(entry.func)
        size = 0 if view or written else sum(o.numel() * o.element_size() for o in entry.outputs)
        plan.flops += flops
        plan.bytes += size
        tally = plan.by_op.setdefault(entry.func.overloadpacket.__name__, [0, 0.0, 0])
        tally[0] += 1
        tally[1] += flops
        tally[2] += size
        for value in (*entry.args, *entry.kwargs.values()):
            for tensor in _tensors_of(value):
                needs.append((tensor, index))

    def _replay(self, plan: _Plan) -> dict[int, Any]:
        """Run the planned entries for real, in the order they ran, below every dispatch mode."""
        import torch

        real: dict[int, Any] = dict(plan.kept)
        for key in plan.leaves:
            value = self._leaves[key]
            real[key] = value.clone() if self._writes.get(key) else value
        with torch._C._DisableTorchDispatch():
            for index in sorted(plan.entries):
                entry = self._entries[index]
                if tuple(t._version for t in _real_tensors(entry.args, entry.kwargs)) != entry.versions:
                    raise ValuesNeeded(
                        f"{entry.func.overloadpacket.__name__} read a real tensor that was written in place after it "
                        "ran: its values then are gone, so routing values cannot be recomputed from it"
                    )
                args, kwargs = _with_values(entry.args, entry.kwargs, real)
                try:
                    result = _run(entry, args, kwargs)
                except (NotImplementedError, RuntimeError, ValueError, TypeError) as error:
                    raise ValuesNeeded(
                        f"{entry.func.overloadpacket.__name__} cannot run on the CPU to compute routing values: "
                        f"{str(error).splitlines()[0][:120] if str(error) else type(error).__name__}"
                    ) from None
                for out, value in zip(entry.outputs, _tensors_of(result)):
                    real[id(out)] = value
                self.cost.ops[entry.func.overloadpacket.__name__] += 1
        self._keep_values(plan, real)
        return real

    def _keep_values(self, plan: _Plan, real: dict[int, Any]) -> None:
        """Keep what was recomputed for the next question, except tensors whose storage is written in place."""
        for index in plan.entries:
            entry = self._entries[index]
            allocates = not any(_aliasing(entry.func))
            for out in entry.outputs:
                key = id(out)
                root = self._root_of(out)
                if key in self._kept or self._writes.get(root) or key not in real:
                    continue
                self._kept[key] = real[key]
                self._kept_by_root.setdefault(root, []).append(key)
                size = out.numel() * out.element_size() if allocates else 0
                self._kept_sizes[key] = size
                self._kept_bytes += size


def _run(entry: _Entry, args: tuple, kwargs: dict):
    """One logged op on real arguments; a random one from the generator state it was logged with."""
    import torch

    if entry.rng is None:
        return entry.func(*args, **kwargs)
    if kwargs.get("generator") is not None:
        generator = torch.Generator()
        generator.set_state(entry.rng)
        return entry.func(*args, **{**kwargs, "generator": generator})
    with torch.random.fork_rng(devices=[]):
        torch.set_rng_state(entry.rng)
        return entry.func(*args, **kwargs)


def random_state(func, kwargs: dict):
    """The state a random op draws from (its own generator's or the default one's), taken before it runs; None for
    an op that draws nothing."""
    import torch

    if not _draws(func):
        return None
    generator = kwargs.get("generator")
    return (generator if generator is not None else torch.default_generator).get_state()


def _with_values(args: tuple, kwargs: dict, real: dict[int, Any]) -> tuple[tuple, dict]:
    import torch

    def value(item):
        if isinstance(item, torch.Tensor):
            return real[id(item)] if item.is_meta else item
        if type(item) in (list, tuple):
            return type(item)(value(each) for each in item)
        return item

    kwargs = {name: value(a) for name, a in kwargs.items()}
    device = kwargs.get("device")
    if device is not None and torch.device(device).type == "meta":  # made on the device of a shape-only tensor
        kwargs["device"] = torch.device("cpu")
    return tuple(value(a) for a in args), kwargs


def _real_tensors(args: tuple, kwargs: dict) -> list:
    """The real tensors among an op's arguments, those in lists (`cat`'s) included."""
    import torch

    found = []

    def visit(item) -> None:
        if isinstance(item, torch.Tensor):
            if not item.is_meta:
                found.append(item)
        elif type(item) in (list, tuple):
            for each in item:
                visit(each)

    visit(args)
    visit(tuple(kwargs.values()))
    return found


def _tensors_of(value) -> list:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


def _first_tensor(args: tuple):
    for value in args:
        found = _tensors_of(value)
        if found:
            return found[0]
    return None


def written_arguments(func, args: tuple, kwargs: dict) -> list:
    """What an op writes in place (its arguments annotated as written by its schema)."""
    return [_argument(func, args, kwargs, p) for p in _aliasing(func)[0]]


def _argument(func, args: tuple, kwargs: dict, position: int):
    name = func._schema.arguments[position].name
    if name in kwargs:
        return kwargs[name]
    return args[position] if position < len(args) else None


@cache
def _draws(func) -> bool:
    import torch

    return torch.Tag.nondeterministic_seeded in func.tags


_ALIASING_OPS = {"_unsafe_view"}
"""Not views by their schema, yet their result shares their argument's storage."""


@cache
def _aliasing(func) -> tuple[tuple[int, ...], bool]:
    """The argument positions an op writes in place, and whether its result views its first tensor argument."""
    written = tuple(
        position
        for position, argument in enumerate(func._schema.arguments)
        if argument.alias_info is not None and argument.alias_info.is_write
    )
    return written, bool(func.is_view) or func.overloadpacket.__name__ in _ALIASING_OPS


def _flops(entry: _Entry) -> float:
    """FLOPs of one logged op by the cost rules (special ops counted as one each)."""
    from solbench.sol.costs import precision_of
    from solbench.sol.rules import OpCall, rule_for

    name = entry.func.overloadpacket.__name__
    rule = rule_for(name, entry.func.tags)
    if rule is None:
        return 0.0
    call = OpCall(
        name=name,
        args=entry.args,
        kwargs=entry.kwargs,
        outputs=list(entry.outputs),
        operand_precision=lambda tensor: precision_of(tensor.dtype),
    )
    try:
        cost = rule(call)
    except Exception:  # a rule that expects what the recorder tracks (none known): charge nothing, run it all the same
        return 0.0
    return cost.flops + cost.special_ops
