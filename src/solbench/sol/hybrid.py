"""Hybrid tensors: shape-only for the GPU-sized floating-point work, real for the small values that steer it.

A reference's work can depend on input values: which experts the tokens route to (`nonzero`,
`bincount`, `where` on an expert mask), ragged lengths (`.item()`, `.tolist()`), offsets. Those
values live in small integer, boolean and offset tensors that the problem's own input generator
builds. The floating-point tensors (activations, weights) are large and never steer the work.

`HybridMode` runs every ATen op twice at most: once on fake tensors, which gives the result's
shape and dtype without computing it, and, when every tensor argument is real and the result is
small, once for real on the CPU. So the generator's `randn(256, 2048, 7168)` is fake (no memory,
no time) while its `randperm(256)` is real, and the reference's `torch.where(expert_mask[e])`
yields real token indices whose count sizes the expert's matrix product. A value-dependent op
on a fake tensor (routing from floating-point logits) cannot be answered this way: it raises
`ValuesNeeded`, or, with `slices`, has its arguments' values recomputed by running for real only the ops
they came from (sol/slices.py: the router's GEMM and top-k, not the experts), within a budget.
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from functools import cache
from typing import Any

from solbench.sol.errors import DataDependentOp, ValuesNeeded
from solbench.sol.select_nonzero import SliceNonzero
from solbench.sol.slices import random_state
from solbench.spec.cpu_reference import cpu_reference_source  # noqa: F401  (re-exported: the analyzer's entry)

REAL_LIMIT = 1 << 22
"""Most elements a floating-point result may have to be computed for real (4 Mi elements:
milliseconds on a CPU); larger ones stay fake."""
REAL_INPUT_LIMIT = 1 << 16
"""Most elements a floating-point *input* may have to keep its values in a hybrid run. Activations above it
become shape-only: their values steer nothing in most references, and computing every op on them for real
(block quantisation's dozens of comparisons and masked writes over millions of elements) cost seconds per
workload. Where values do steer the work (routing from logits), `ValuesNeeded` sends the analysis to a real run."""
REAL_INDEX_LIMIT = 1 << 24
"""The same for integer and boolean results (one-hot expert masks of a few thousand tokens are
about 10 Mi elements); larger ones stay fake."""


def _mode_base():
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode


class HybridMode(_mode_base()):
    """Dispatch mode: shape-only (meta) results for large or floating-point-derived tensors, real ones for
    small tensors computed only from real ones. Meta kernels run in C++, so the shape-only side costs
    microseconds per op where fake tensors cost a millisecond."""

    def __init__(self, shape_only: bool = False, float_factory_limit: int = REAL_LIMIT, slices: bool = False):
        super().__init__()
        from solbench.sol.slices import SliceLog

        self.shape_only = shape_only
        self.slices = SliceLog() if slices and not shape_only else None
        """Where shape-only values steer the work: how each shape-only tensor was made, to recompute its values."""
        self.float_factory_limit = float_factory_limit
        """Most elements a floating-point factory (randn, rand, a float zeros) makes for real; larger ones are
        shape-only from the start (the analysis's input generation uses REAL_INPUT_LIMIT)."""
        """Compute nothing for real (the first, values-free attempt): every result is a meta tensor."""
        self._twins: dict[int, Any] = {}
        """id of a real tensor -> its meta twin (so in-place updates of the twin persist)."""
        self._stale: set[int] = set()
        """Real tensors written in place with shape-only values: their real data is stale, use their twin."""
        self._stale_storages: set[int] = set()
        """The storages of those tensors: every real tensor that views one (the base a slice of it was written
        through, another view of that base) holds stale data too."""
        self._twins_by_storage: dict[int, list[int]] = {}
        """With slices: storage -> ids of the twins made of real tensors viewing it (their values are the real
        tensor's, until something writes that storage with shape-only values)."""
        self._keep: list[Any] = []
        self._constants: dict[int, Any] = {}
        """Shape-only: one-element tensors fake tensors would keep the values of (see `_note_constants`), by id."""
        self._base_nonzero = SliceNonzero()
        """`nonzero` of slices of one large base, answered from one sorted `nonzero` of it (sol/select_nonzero.py)."""
        self.assumed: list[str] = []
        """Branches on a floating-point scalar without a value (guards such as `if scale == 0:`), taken as
        nonzero values and false comparisons: listed in the analysis's `execution`."""

    def fake(self, tensor):
        """The shape-only twin of a real tensor (memoized)."""
        if tensor.is_meta:
            return tensor
        twin = self._twins.get(id(tensor))
        if twin is None:
            twin = tensor.to("meta")
            self._twins[id(tensor)] = twin
            self._keep.append(tensor)
            if self.slices is not None and not self.is_stale(tensor):  # stale data are no values to recompute from
                self.slices.leaf(twin, tensor)
                self._twins_by_storage.setdefault(_storage_key(tensor), []).append(id(twin))
        return twin

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # nothing is compiled under this mode: skip torch's per-call dynamo guard

    def is_stale(self, tensor) -> bool:
        """A real tensor written in place with shape-only values, or viewing the storage of one: its data are out of
        date (the mode computes with its meta twin). Any other real tensor reads the same outside the mode."""
        if not self._stale:
            return False
        return id(tensor) in self._stale or (not tensor.is_meta and _storage_key(tensor) in self._stale_storages)

    def _written_shape_only(self, tensors: list) -> None:
        """`tensors` (real ones) were written in place with shape-only values: they and every view of their
        storages are stale, and a slice can no longer recompute values from another twin of those storages."""
        for tensor in tensors:
            if tensor.is_meta:
                continue
            self._stale.add(id(tensor))
            storage = _storage_key(tensor)
            if storage:  # 0: no memory, so no values to go stale
                self._stale_storages.add(storage)
            if self.slices is not None:
                written = self._twins.get(id(tensor))
                for twin in self._twins_by_storage.pop(storage, ()):
                    if written is None or twin != id(written):  # the written twin's log holds the write
                        self.slices.forget_leaf(twin)
                if written is not None:
                    self._twins_by_storage[storage] = [id(written)]

    def is_twin(self, tensor, twin) -> bool:
        """`twin` is the shape-only twin of the real `tensor` (what an in-place op on `tensor` returns here)."""
        return self._twins.get(id(tensor)) is twin

    def has_stale(self) -> bool:
        """Some real tensor is `is_stale` (a quick check before asking tensor by tensor)."""
        return bool(self._stale)

    def compute(self, func, types, args=(), kwargs=None):
        """The result of one ATen call: real where its arguments are real and it is small, else shape only.
        Called by the dispatcher when this mode is entered, or directly by a recorder that owns this mode."""
        result = self._compute(func, types, args, kwargs)
        if self.shape_only:
            lift = func in _lifts()
            if lift or self._constants:
                self._note_constants(args, kwargs, result, lift)
        return result

    def _note_constants(self, args, kwargs, result, lift: bool) -> None:
        """Fake tensors keep the values of one-element tensors made from Python data (`torch.tensor(d)`, which
        `lift` brings under the mode) and of one-element results of ops on those alone, so they answer `item` or
        `nonzero` of them where a shape-only run cannot: a refusal there is no `DataDependentOp`, and fake tensors
        are tried next."""
        import torch

        if not lift and not any(
            id(arg) in self._constants
            or (isinstance(arg, (list, tuple)) and any(id(each) in self._constants for each in arg))
            for arg in args
        ):
            return  # the common case, kept quick: no positional argument is one
        tensors = _tensors_in(args, kwargs, torch.Tensor)
        if not tensors:
            return
        if lift:
            constant = all(not t.is_meta and t.numel() <= 1 for t in tensors)
        else:
            constant = self._from_constants(tensors)
        outputs = _tensors_in((result,), {}, torch.Tensor)
        if constant and outputs and all(t.numel() <= 1 for t in outputs):
            self._constants.update((id(t), t) for t in outputs)

    def _from_constants(self, tensors: list) -> bool:
        return bool(tensors) and all(self._constants.get(id(t)) is t for t in tensors)

    def _compute(self, func, types, args, kwargs):
        import torch

        kwargs = dict(kwargs) if kwargs else {}
        device = kwargs.get("device")
        if device is not None and torch.device(device).type not in ("cpu", "meta"):
            kwargs["device"] = torch.device("cpu")
        tensors = _tensors_in(args, kwargs, torch.Tensor)
        name = func.overloadpacket.__name__
        all_real = not self.shape_only and all(not t.is_meta and not self.is_stale(t) for t in tensors)
        if all_real and tensors and sum(t.numel() for t in tensors) <= REAL_LIMIT and name in _SIZE_PRESERVING:
            return _computed(
                func, args, kwargs, self._base_nonzero
            )  # small real arguments, a result no larger than them: just compute
        if not tensors and not self.shape_only:
            size = _factory_size(func, args, kwargs)
            if size is not None and size <= _limit(kwargs.get("dtype")):
                rng = random_state(func, kwargs) if self.slices is not None else None
                made = self._factory(func(*args, **kwargs))  # a small factory (randperm, arange, a small zeros)
                if self.slices is not None and isinstance(made, torch.Tensor) and made.is_meta:
                    self.slices.log(func, args, kwargs, made, rng)
                return made
        if (
            name == "_local_scalar_dense"
            and tensors
            and tensors[0].is_meta
            and tensors[0].numel() == 1
            and (tensors[0].dtype.is_floating_point or tensors[0].dtype == torch.bool)
        ):
            if self.shape_only:  # the values-free attempt fails here, not after running the rest for nothing
                self.assumed.append(f"{tensors[0].dtype} scalar")
                if self._from_constants(tensors):
                    raise ValuesNeeded("a branch on a floating-point value")  # fake tensors hold this one's value
                raise DataDependentOp(f"a branch on a floating-point value ({func})")
            if self.slices is not None:
                try:
                    return self._from_slice(func, args, kwargs, tensors)
                except ValuesNeeded:
                    pass  # no slice within budget: the assumption below, as without slices
            self.assumed.append(f"{tensors[0].dtype} scalar")
            return False if tensors[0].dtype == torch.bool else 1.0
        if not all_real:
            quick = _pointwise_shape(func, args, kwargs, tensors)
            if quick is not None:
                if self.slices is not None:
                    self._log(func, args, kwargs, quick)
                return quick
        meta_args, meta_kwargs = _map_tensors(self.fake, args, kwargs)
        call = func
        if "device" in meta_kwargs or (not tensors and _takes_device(func)):
            meta_kwargs["device"] = torch.device("meta")
            meta_kwargs.pop("pin_memory", None)
            if meta_kwargs.pop("generator", None) is not None:
                call = func.overloadpacket  # e.g. randn.generator -> randn.default on the meta device
        try:
            meta_result = call(*meta_args, **meta_kwargs)
        except (NotImplementedError, RuntimeError, ValueError) as error:
            shape_rule = _SHAPE_RULES.get(name)
            if shape_rule is not None:
                meta_result = shape_rule(*meta_args, **meta_kwargs)
            elif all_real and tensors and sum(t.numel() for t in tensors) <= REAL_INDEX_LIMIT:
                # data-dependent (nonzero, item) on small real values: compute
                return _computed(func, args, kwargs, self._base_nonzero)
            elif self.slices is not None:
                return self._from_slice(func, args, kwargs, tensors)
            elif (
                self.shape_only
                and not self._from_constants(tensors)
                and (refusal := _refused_without_values(func)) is not None
            ):
                raise DataDependentOp(refusal) from error
            else:
                raise ValuesNeeded(
                    f"{name} on a tensor without values (computed from "
                    f"floating-point data): {str(error).splitlines()[0][:120]}"
                ) from error
        results = _tensors_in((meta_result,), {}, torch.Tensor)
        small = all(r.numel() <= _limit(r.dtype) for r in results)
        if all_real and small:
            try:
                result = func(*args, **kwargs)
                return self._factory(result) if not tensors else result
            except (NotImplementedError, RuntimeError, ValueError):
                if any(not (r.dtype.is_floating_point or r.dtype.is_complex) for r in results):
                    raise
                # a floating-point result the CPU build cannot compute (NVFP4 block-scaled _scaled_mm): shape only
        if func._schema.is_mutable:
            self._stale.update(id(t) for t in tensors if not t.is_meta)  # every real argument, written or read
            self._written_shape_only(_written_arguments(func, args, kwargs))
        if self.slices is not None:
            self._log(func, args, kwargs, meta_result, random_state(func, kwargs))
        return meta_result

    def _log(self, func, args, kwargs, result, rng=None) -> None:
        """Note how a shape-only result was made (or written), so its values can be recomputed (sol/slices.py).
        A real argument written with shape-only values stands as its twin, which holds what was written."""
        if self._stale:
            import torch

            def current(tensor):
                return self.fake(tensor) if not tensor.is_meta and self.is_stale(tensor) else tensor

            args, kwargs = _map_tensors(current, args, kwargs)
            result = current(result) if isinstance(result, torch.Tensor) else result
        assert self.slices is not None  # the caller checked
        self.slices.log(func, args, kwargs, result, rng)

    def _from_slice(self, func, args, kwargs, tensors):
        """`func` on real values, its shape-only arguments' values recomputed by a slice run for real (raises
        `SliceOverBudget` beyond its budget). The result is real: its shape or its values decide work that
        follows; one above REAL_LIMIT (floating-point) or REAL_INDEX_LIMIT elements is kept shape-only (logged as
        made here). An op that writes a shape-only tensor in place needs no values: its shape stays, the write is
        logged."""
        import torch

        assert self.slices is not None  # the caller checked
        target = args[0] if func._schema.is_mutable and args and isinstance(args[0], torch.Tensor) else None
        if target is not None and (target.is_meta or self.is_stale(target)):
            target = self.fake(target)
            self._log(func, args, kwargs, target)
            return target
        current = [self.fake(t) if not t.is_meta and self.is_stale(t) else t for t in tensors]
        values = self.slices.values([t for t in current if t.is_meta], func.overloadpacket.__name__)

        def value(tensor):
            if not tensor.is_meta and self.is_stale(tensor):
                tensor = self.fake(tensor)
            return values[id(tensor)] if tensor.is_meta else tensor

        real_args, real_kwargs = _map_tensors(value, args, kwargs)
        with torch._C._DisableTorchDispatch():
            result = _computed(func, real_args, real_kwargs)
        if isinstance(result, torch.Tensor) and result.numel() > _limit(result.dtype):
            made = result.to("meta")
            self._log(func, args, kwargs, made)
            return made
        return result

    def _factory(self, result):
        """A factory's real result, or its shape-only twin where it is floating-point and above
        `float_factory_limit`: drawn for real all the same (milliseconds), so the random stream, and with it
        the integer tensors the generator draws next, stay what the evaluator's generator makes at that seed."""
        import torch

        if (
            isinstance(result, torch.Tensor)
            and result.dtype.is_floating_point
            and result.numel() > self.float_factory_limit
        ):
            return result.to("meta")
        return result

    __torch_dispatch__ = compute


def _written_arguments(func, args, kwargs) -> list:
    """The tensors an in-place or out= op writes (by its schema's alias annotations)."""
    import torch

    from solbench.sol.slices import written_arguments

    return [t for t in written_arguments(func, args, kwargs) if isinstance(t, torch.Tensor)]


def _storage_key(tensor) -> int:
    """Which memory a real tensor views (its storage's address; 0 where it has none)."""
    return tensor.untyped_storage().data_ptr()


STRIDED_NONZERO_ELEMENTS = 1 << 14
"""From this many elements on, a strided view's `nonzero` is taken of the view compared with zero (`_computed`)."""


def _computed(func, args, kwargs, slices: SliceNonzero | None = None):
    """`func` computed on real arguments. A `nonzero` of a strided view of a large contiguous base (a routing loop's
    `torch.where(mask[e])` on a permuted one-hot mask of 256 experts, every element of the slice on its own cache
    line, however few tokens the slice holds) is answered by `slices` from one sorted `nonzero` of the base.
    Otherwise a large strided view's is taken of the view compared with zero: one strided pass over memory
    instead of nonzero's two, 2-3x faster where they miss the cache (below STRIDED_NONZERO_ELEMENTS the passes
    hit it, and the extra tensor costs more), the same indices (NaN and -0.0 compare as nonzero does)."""
    if func.__name__ == "nonzero.default" and not kwargs and len(args) == 1 and not args[0].is_contiguous():
        view = args[0]
        found = slices.nonzero(view) if slices is not None else None
        if found is not None:
            return found
        if view.numel() >= STRIDED_NONZERO_ELEMENTS:
            return func(view.ne(0))
    return func(*args, **kwargs)


@cache
def _takes_device(func) -> bool:
    """A factory (``empty``, ``randn``, ``arange`` ...) places its result; ops without tensor arguments that
    are not factories (``promote_types``) have no device argument to give."""
    return any(argument.name == "device" for argument in func._schema.arguments)


def _map_tensors(function, args, kwargs):
    """`args` and `kwargs` with `function` applied to every tensor among them (ATen arguments nest at most
    one list deep; deeper nesting goes through torch's general tree map)."""
    import torch

    def mapped(value):
        if isinstance(value, torch.Tensor):
            return function(value)
        kind = type(value)
        if kind is list or kind is tuple:
            if any(type(item) in (list, tuple, dict) for item in value):
                raise _Nested
            return kind(function(item) if isinstance(item, torch.Tensor) else item for item in value)
        if kind is dict:
            raise _Nested
        return value

    try:
        return tuple(mapped(value) for value in args), {key: mapped(value) for key, value in kwargs.items()}
    except _Nested:
        from torch.utils._pytree import tree_map

        return tree_map(lambda v: function(v) if isinstance(v, torch.Tensor) else v, (args, kwargs))


class _Nested(Exception):
    """Arguments nested deeper than one list."""


_POINTWISE_BINARY = {"add", "sub", "mul", "div", "maximum", "minimum", "pow", "rsub", "atan2", "fmod", "remainder"}
_POINTWISE_UNARY = {
    "exp",
    "neg",
    "log",
    "sigmoid",
    "tanh",
    "rsqrt",
    "sqrt",
    "abs",
    "sin",
    "cos",
    "exp2",
    "log1p",
    "expm1",
    "reciprocal",
    "relu",
    "silu",
    "gelu",
    "erf",
    "square",
    "sign",
    "floor",
    "ceil",
    "round",
}
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}
_TO_FLOAT = {
    "exp",
    "log",
    "sigmoid",
    "tanh",
    "rsqrt",
    "sqrt",
    "sin",
    "cos",
    "exp2",
    "log1p",
    "expm1",
    "reciprocal",
    "silu",
    "gelu",
    "erf",
}


def _pointwise_shape(func, args, kwargs, tensors):
    """The result of a functional elementwise op on shape-only tensors, from broadcasting and type promotion
    alone: the meta kernels of these ops are Python decompositions, a hundred times slower."""
    import torch

    name = func.overloadpacket.__name__
    if (
        name in _IN_PLACE_SCATTERS
        and args
        and isinstance(args[0], torch.Tensor)
        and args[0].is_meta
        and not kwargs.get("out")
    ):
        return args[0]  # an in-place scatter into a shape-only tensor: its shape and dtype do not change
    if func._schema.is_mutable or (kwargs and set(kwargs) - {"alpha", "beta"}):
        return None
    shaped = _matrix_shape(name, args, tensors) or _reduction_shape(name, args, tensors)
    if shaped is not None:
        return torch.empty(shaped[0], dtype=shaped[1], device="meta")
    if name in _POINTWISE_UNARY and len(args) == 1 and len(tensors) == 1:
        dtype = tensors[0].dtype
    elif (name in _POINTWISE_BINARY or name in _COMPARISONS) and len(args) == 2 and tensors:
        dtype = torch.result_type(args[0], args[1])
        if name == "div" and not (dtype.is_floating_point or dtype.is_complex):
            dtype = torch.get_default_dtype()
        if name in _COMPARISONS:
            dtype = torch.bool
    else:
        dtype = _contiguous_elementwise_dtype(name, args, tensors)
        if dtype is None:
            return None
    if name in _TO_FLOAT and not (dtype.is_floating_point or dtype.is_complex):
        dtype = torch.get_default_dtype()
    return torch.empty(_broadcast(tensors), dtype=dtype, device="meta")


def _contiguous_elementwise_dtype(name, args, tensors):
    """The result dtype of a bitwise or logical combination, a clamp of a floating-point tensor by numbers, or
    a three-way `where`, on contiguous tensors only (whose elementwise result is contiguous too, as the meta
    kernel would make it): the masks and clamps of block quantization, whose meta kernels are Python."""
    import torch

    if (
        name == "clamp"
        and len(tensors) == 1
        and args[0] is tensors[0]
        and _row_major(args[0])
        and args[0].dtype.is_floating_point
        and all(a is None or type(a) in (int, float) for a in args[1:])
    ):
        return args[0].dtype  # contiguous, or strided (every other column: `gate_up[..., ::2]`): contiguous result
    if not tensors or not all(t.is_contiguous() for t in tensors):
        return None
    if name == "clamp" and args[0] is tensors[0] and args[0].dtype.is_floating_point:  # tensor bounds
        promoted = {torch.result_type(args[0], bound) for bound in args[1:] if isinstance(bound, torch.Tensor)}
        return promoted.pop() if len(promoted) == 1 else None
    if name in _BITWISE and len(args) == 2:
        return torch.bool if name.startswith("logical") else torch.result_type(args[0], args[1])
    if name == "where" and len(args) == 3 and len(tensors) == 3 and args[0].dtype == torch.bool:
        return torch.result_type(args[1], args[2])
    return None


def _row_major(tensor) -> bool:
    """Strides falling strictly from the first dim to the last (size-1 dims aside), none zero: an elementwise
    result of such a tensor alone is contiguous, as its meta kernel makes it."""
    strides = [stride for stride, size in zip(tensor.stride(), tensor.shape) if size != 1]
    return all(stride > 0 for stride in strides) and all(a > b for a, b in zip(strides, strides[1:]))


_BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor"}
_IN_PLACE_SCATTERS = {
    "index_add_",
    "index_put_",
    "index_copy_",
    "index_fill_",
    "scatter_",
    "scatter_add_",
    "masked_fill_",
    "copy_",
    "zero_",
    "fill_",
}


def _matrix_shape(name, args, tensors):
    """(shape, dtype) of a plain matrix product or a row gather, or None."""
    import torch

    if name == "mm" and len(args) == 2 and len(tensors) == 2 and args[0].dim() == args[1].dim() == 2:
        return (args[0].shape[0], args[1].shape[1]), args[0].dtype
    if name == "addmm" and len(args) == 3 and len(tensors) == 3 and args[1].dim() == args[2].dim() == 2:
        return (args[1].shape[0], args[2].shape[1]), args[1].dtype
    if name == "bmm" and len(args) == 2 and len(tensors) == 2 and args[0].dim() == args[1].dim() == 3:
        return (args[0].shape[0], args[0].shape[1], args[1].shape[2]), args[0].dtype
    if (
        name == "index"
        and len(args) == 2
        and len(args[1]) == 1
        and isinstance(args[1][0], torch.Tensor)
        and args[1][0].dtype in (torch.int64, torch.int32)
        and args[0].dim() >= 1
    ):
        return tuple(args[1][0].shape) + tuple(args[0].shape[1:]), args[0].dtype
    return None


_REDUCTIONS = {"amax", "amin", "sum", "mean"}


def _reduction_shape(name, args, tensors):
    """(shape, dtype) of a reduction over some dims of a contiguous tensor (whose result is contiguous, as the meta
    kernel makes it), or None: the max and sum of block quantisation's scales, whose meta kernels are Python."""
    import torch

    if (
        name not in _REDUCTIONS
        or len(tensors) != 1
        or args[0] is not tensors[0]
        or not args[0].is_contiguous()
        or not 1 <= len(args) <= 3
    ):
        return None
    source = args[0]
    dims = args[1] if len(args) > 1 else ([] if name in ("amax", "amin") else None)
    if name in ("sum", "mean") and (len(args) == 1 or not dims):
        return None  # sum.default and mean.default take a dtype, not dims; an empty list of dims is its own case
    if name == "mean" and not (source.dtype.is_floating_point or source.dtype.is_complex):
        return None
    keep = bool(args[2]) if len(args) > 2 else False
    rank = source.dim()
    reduced = {d % rank for d in dims} if dims and rank else set(range(rank))
    shape = tuple(1 if d in reduced else size for d, size in enumerate(source.shape) if keep or d not in reduced)
    dtype = (
        torch.int64
        if name == "sum" and not (source.dtype.is_floating_point or source.dtype.is_complex)
        else source.dtype
    )
    return shape, dtype


def _broadcast(tensors) -> tuple[int, ...]:
    shapes = [tuple(t.shape) for t in tensors]
    if all(shape == shapes[0] for shape in shapes):
        return shapes[0]
    rank = max(len(shape) for shape in shapes)
    result = [1] * rank
    for shape in shapes:
        for position, size in enumerate(shape, start=rank - len(shape)):
            if size != 1:
                if result[position] not in (1, size):
                    raise RuntimeError(f"shapes {shapes} do not broadcast")
                result[position] = size
    return tuple(result)


def _scaled_mm_shape(a, b, *args, out_dtype=None, **kwargs):
    """`_scaled_mm`'s result without its scaling checks (the CPU and meta builds reject NVFP4 block scales)."""
    import torch

    dtype = out_dtype if out_dtype is not None else (args[4] if len(args) > 4 and args[4] is not None else a.dtype)
    return torch.empty((a.shape[0], b.shape[1]), dtype=dtype, device="meta")


_SHAPE_RULES = {"_scaled_mm": _scaled_mm_shape}
"""Results by shape alone for ops whose meta kernel refuses configurations the GPU accepts."""


_SIZE_PRESERVING = {
    "view",
    "_unsafe_view",
    "reshape",
    "select",
    "slice",
    "unbind",
    "squeeze",
    "unsqueeze",
    "permute",
    "transpose",
    "t",
    "alias",
    "detach",
    "_to_copy",
    "clone",
    "contiguous",
    "copy_",
    "copy",
    "sum",
    "cumsum",
    "add",
    "sub",
    "mul",
    "div",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "bitwise_and",
    "bitwise_or",
    "logical_and",
    "logical_or",
    "logical_not",
    "sort",
    "argsort",
    "bincount",
    "nonzero",
    "unique",
    "_unique2",
    "where",
    "index",
    "index_select",
    "gather",
    "fill_",
    "zero_",
    "index_put",
    "index_put_",
    "max",
    "min",
    "amax",
    "amin",
    "topk",
    "lift_fresh",
    "item",
    "_local_scalar_dense",
    "masked_select",
    "clamp",
    "remainder",
    "floor_divide",
    "abs",
    "neg",
}
"""Ops whose result is no larger than their arguments (or a small table): safe to compute directly."""


def _tensors_in(args, kwargs, tensor_type) -> list:
    """The tensors among the arguments (ATen arguments nest at most one list deep)."""
    found = []
    for value in (*args, *kwargs.values()):
        if isinstance(value, tensor_type):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, tensor_type))
    return found


def _limit(dtype) -> int:
    return REAL_LIMIT if dtype is None or dtype.is_floating_point or dtype.is_complex else REAL_INDEX_LIMIT


def _factory_size(func, args, kwargs) -> int | None:
    """Elements a factory call creates, from its size argument, where that is plain (None otherwise)."""
    import math

    name = func.overloadpacket.__name__
    if name in ("randperm",) and args and isinstance(args[0], int):
        return args[0]
    if name == "scalar_tensor":  # a number made a tensor (`torch.where(mask, x, 0.0)`): one element
        return 1
    if name in ("arange",):
        numbers = [a for a in args if isinstance(a, (int, float))]
        if len(numbers) == 1:
            return int(abs(numbers[0]))
        if len(numbers) >= 2:
            step = numbers[2] if len(numbers) > 2 else 1
            return int(abs((numbers[1] - numbers[0]) / step)) if step else None
    size = kwargs.get("size", args[0] if args else None)
    if name in _FACTORIES and isinstance(size, (list, tuple)) and all(isinstance(d, int) for d in size):
        return math.prod(size)
    return None


_FACTORIES = {"empty", "zeros", "ones", "full", "randn", "rand", "randint", "empty_strided"}


@cache
def _lifts() -> frozenset:
    """The ops that bring a tensor made from Python data (`torch.tensor(...)`) under a mode."""
    import torch

    return frozenset({torch.ops.aten.lift_fresh.default, torch.ops.aten.lift_fresh_copy.default})


def _refused_without_values(func) -> str | None:
    """Why fake tensors without a shape environment refuse `func` whatever its inputs, or None. By PyTorch's own
    tags: an output that is a value of the input, or an output shape that depends on values. Not `index.Tensor`,
    tagged so but refused only for a boolean index."""
    import torch

    tags = func.tags
    if torch.Tag.data_dependent_output in tags:
        return f"{func} reads a value"
    if torch.Tag.dynamic_output_shape in tags and func is not torch.ops.aten.index.Tensor:
        return f"{func}: its output's shape depends on values"
    return None


@contextmanager
def hybrid_values(shape_only: bool = False, float_factory_limit: int = REAL_LIMIT, slices: bool = False):
    """Run inside a `HybridMode`, with CUDA's lazy initialisation disabled (see `cuda_not_initialised`), and
    element-by-element work on real tensors run natively (see `NativeSmallOps`)."""
    mode = HybridMode(shape_only, float_factory_limit, slices)
    reads = SliceValueReads(mode) if mode.slices is not None else nullcontext()
    with cuda_not_initialised(), mode, NativeSmallOps(mode), reads:
        yield mode


def _function_mode_base():
    from torch.overrides import TorchFunctionMode

    return TorchFunctionMode


class NativeSmallOps(_function_mode_base()):
    """Above a `HybridMode`: the calls of an element-by-element Python loop over real tensors (a generator that
    draws each token's experts with `randperm` and writes them with `ids[i] = perm`) run natively, below the
    dispatch mode, which costs several times such a call. Only where the result is what the mode would
    compute: every tensor argument real and up to date (not `is_stale`), and nothing allocated that the
    arguments do not bound (basic indexing, a `randperm` within the mode's limit, reading values out).
    Everything else goes through the mode as before.

    Every torch call of the generator passes here, so the check costs what the loop's own calls cost: one
    table look-up picks the check for the function."""

    def __init__(self, mode: HybridMode):
        super().__init__()
        self._checks = {} if mode.shape_only else _NATIVE_CHECKS
        self._is_stale = mode.is_stale

    def __torch_function__(self, func, types, args=(), kwargs=None):
        check = self._checks.get(func)
        if check is not None and check(args, kwargs, self._is_stale):
            if kwargs and "device" in kwargs:
                kwargs = {**kwargs, "device": _CPU}  # a factory naming a GPU: made on the CPU, as the mode makes it
            with _DisableTorchDispatch():
                return func(*args, **kwargs) if kwargs else func(*args)
        return func(*args, **kwargs) if kwargs else func(*args)


class SliceValueReads(_function_mode_base()):
    """Above a `HybridMode` with slices: `tolist()` and `numpy()` of a shape-only tensor (a routing table's token counts
    read into Python) read values recomputed by a slice. They read memory directly, never reaching the mode as an ATen
    call. (Only where the mode has slices: a function mode costs every torch call a Python frame.)"""

    def __init__(self, mode: HybridMode):
        super().__init__()
        self._mode = mode

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _VALUE_READS and args and self._mode.slices is not None:
            import torch

            tensor = args[0]
            if isinstance(tensor, torch.Tensor) and (tensor.is_meta or self._mode.is_stale(tensor)):
                twin = self._mode.fake(tensor)
                values = self._mode.slices.values([twin], func.__name__)
                return func(values[id(twin)], *args[1:], **kwargs)
        return func(*args, **kwargs)


def _value_reads() -> frozenset:
    import torch

    return frozenset({torch.Tensor.tolist, torch.Tensor.numpy})


_VALUE_READS = _value_reads()


def _randperm_allowed(args, kwargs, is_stale) -> bool:
    """An integer permutation of up to REAL_INDEX_LIMIT elements: what the mode computes for real, on the CPU
    (where a GPU is named, without a generator: the mode moves the call to the CPU, whose generator draws it)."""
    if len(args) != 1 or type(args[0]) is not int or not 0 <= args[0] <= REAL_INDEX_LIMIT:
        return False
    if not kwargs:
        return True
    if not kwargs.keys() <= _RANDPERM_KEYWORDS:
        return False
    device = kwargs.get("device")
    dtype = kwargs.get("dtype")
    if dtype is not None and (dtype.is_floating_point or dtype.is_complex):
        return False
    return device is None or _on_cpu(device) or (kwargs.get("generator") is None and _moved_to_cpu(device))


def _getitem_allowed(args, kwargs, is_stale) -> bool:
    """A basic index of an up-to-date real tensor: a view of its values."""
    if kwargs or len(args) != 2:
        return False
    tensor = args[0]
    return type(tensor) is _TENSOR and not tensor.is_meta and not is_stale(tensor) and _basic_index(args[1])


def _setitem_allowed(args, kwargs, is_stale) -> bool:
    """A number or an up-to-date real tensor written at a basic index of an up-to-date real tensor."""
    if kwargs or len(args) != 3:
        return False
    tensor, index, value = args
    if type(tensor) is not _TENSOR or tensor.is_meta or is_stale(tensor) or not _basic_index(index):
        return False
    kind = type(value)
    if kind is _TENSOR:
        return not value.is_meta and not is_stale(value)
    return kind is int or kind is float or kind is bool


def _read_allowed(args, kwargs, is_stale) -> bool:
    """`item`, `tolist`: the values of an up-to-date real tensor read out."""
    return not kwargs and len(args) == 1 and _up_to_date(args[0], is_stale)


def _up_to_date(tensor, is_stale) -> bool:
    """A real tensor whose data are its values: not meta, not a subclass (fake tensors are), not written with
    shape-only values (`HybridMode.is_stale`)."""
    return type(tensor) is _TENSOR and not tensor.is_meta and not is_stale(tensor)


def _basic_index(index) -> bool:
    """Ints, slices of ints, None and Ellipsis (alone or in a tuple): a view, no larger than the tensor."""
    kind = type(index)
    if kind is int:
        return True
    if kind is slice:
        return _int_slice(index)
    if kind is not tuple:
        return index is None or index is Ellipsis
    for part in index:
        kind = type(part)
        if kind is slice:
            if not _int_slice(part):
                return False
        elif not (kind is int or part is None or part is Ellipsis):
            return False
    return True


def _int_slice(part: slice) -> bool:
    start, stop, step = part.start, part.stop, part.step
    return (
        (start is None or type(start) is int)
        and (stop is None or type(stop) is int)
        and (step is None or type(step) is int)
    )


def _on_cpu(device) -> bool:
    if type(device) is _DEVICE:
        return device.type == "cpu"
    return device == "cpu" or _DEVICE(device).type == "cpu"


def _moved_to_cpu(device) -> bool:
    """A device the mode makes factories on the CPU for (`compute`): any but the CPU and meta."""
    return (device.type if type(device) is _DEVICE else _DEVICE(device).type) not in ("cpu", "meta")


def _torch_objects() -> tuple:
    import torch

    return torch.Tensor, torch.device, torch._C._DisableTorchDispatch, torch.device("cpu")


_TENSOR, _DEVICE, _DisableTorchDispatch, _CPU = _torch_objects()


def _native_checks() -> dict:
    """The calls that may run natively, each with the check of its arguments."""
    import torch

    return {
        torch.randperm: _randperm_allowed,
        torch.Tensor.__getitem__: _getitem_allowed,
        torch.Tensor.__setitem__: _setitem_allowed,
        torch.Tensor.item: _read_allowed,
        torch.Tensor.tolist: _read_allowed,
    }


_NATIVE_CHECKS = _native_checks()
_RANDPERM_KEYWORDS = frozenset({"device", "dtype", "generator"})


@contextmanager
def cuda_not_initialised():
    """CUDA's lazy initialisation disabled, so that factory calls naming `device="cuda"` reach the mode
    (which moves them to the CPU) on a machine without CUDA."""
    import torch.cuda

    lazy_init = torch.cuda._lazy_init
    torch.cuda._lazy_init = lambda: None
    try:
        yield
    finally:
        torch.cuda._lazy_init = lazy_init
