"""Tensor-parallel shards: is the problem a function that one rank really computes?

A TP rank holds 1/TP of some dims (heads, intermediate columns): its row-parallel projection
contracts over its share and yields a *partial sum* that an all-reduce completes. Everything a rank
does with that partial sum before the all-reduce must commute with the sum -- reshape it, index it,
scale it by values every rank holds, add other partial sums. Two things no deployment computes:

- a **nonlinear use of a partial sum**: adding the residual (every rank holds it, so it would be
  counted TP times), normalising, an activation -- Llama decoder layer "TP=4" that adds the rank's
  attention output to the residual and then applies the next RMSNorm;
- a **reduction over a sharded dim**: a norm, mean, softmax or variance whose statistic needs every
  rank's columns -- OLMo-2's q/k RMSNorm over the rank's 512 of the projection's 4096 columns.

Which dims are sharded: axes named by ``shard:AXIS`` tags, or, in a problem tagged ``tp:N``, const
axes whose description says so (``... (published / 8: TP=8 shard)``, as `solbench extract` writes).
The reference runs once under a dispatch recorder; dims are recognised by size, so a sharded size
that equals another axis's size (or a var axis's value at the workload) is ambiguous and not used.
"""

from __future__ import annotations

import re

from solbench.spec.definition import ConstAxis, Definition

SHARD_TAG = "shard"
_CONTRACTIONS = {
    "mm",
    "bmm",
    "addmm",
    "baddbmm",
    "addbmm",
    "matmul",
    "linear",
    "_grouped_mm",
    "_scaled_mm",
    "_scaled_grouped_mm",
    "dot",
    "mv",
    "addmv",
}
_LINEAR = {
    "view",
    "_unsafe_view",
    "reshape",
    "expand",
    "permute",
    "transpose",
    "t",
    "unsqueeze",
    "squeeze",
    "select",
    "slice",
    "as_strided",
    "clone",
    "contiguous",
    "_to_copy",
    "to",
    "copy",
    "detach",
    "alias",
    "index",
    "index_select",
    "gather",
    "cat",
    "stack",
    "split",
    "split_with_sizes",
    "chunk",
    "unbind",
    "neg",
    "sum",
    "mean",
    "index_put",
    "index_add",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "narrow",
    "flatten",
    "unflatten",
    "movedim",
    "_reshape_alias",
    "lift_fresh",
    "repeat",
    "new_empty_strided",
    "unsafe_split",
    "view_as",
    "expand_as",
    "masked_fill",
    "where",
    "zero",
    "fill",
    "flip",
    "roll",
    "index_copy",
    "embedding_dense_backward",
    "_unsafe_index",
}
"""Ops that commute with the all-reduce when a partial sum passes through them (with operands every
rank holds: an index, a mask, a per-row routing weight)."""
_SCALING = {"mul", "div"}
_ADDING = {"add", "sub"}
_SHAPE_ONLY = {
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "new_zeros",
    "new_empty",
    "new_ones",
    "new_full",
    "sym_size",
    "sym_numel",
    "sym_stride",
    "is_same_size",
    "_local_scalar_dense",
}
_REDUCTIONS = {
    "sum",
    "mean",
    "var",
    "var_mean",
    "std",
    "std_mean",
    "amax",
    "amin",
    "logsumexp",
    "_softmax",
    "_log_softmax",
    "softmax",
    "log_softmax",
    "norm",
    "linalg_vector_norm",
    "prod",
    "max",
    "min",
    "native_layer_norm",
    "native_group_norm",
    "rms_norm",
    "_fused_rms_norm",
    "cumsum",
    "topk",
    "argmax",
    "argmin",
    "sort",
}

_DEFAULT_DIM = {"sort": -1, "topk": -1, "_softmax": -1, "_log_softmax": -1}


def sharded_axes(definition: Definition) -> list[str]:
    named = [t.split(":", 1)[1] for t in definition.tags if t.startswith(f"{SHARD_TAG}:")]
    if named:
        return [a for a in named if a in definition.axes]
    if definition.tag("tp") is None:
        return []
    return [
        name
        for name, axis in definition.axes.items()
        if isinstance(axis, ConstAxis) and re.search(r"\bTP\s*=\s*\d+\s+shard|\bshard\b", axis.description or "")
    ]


def shard_sizes(definition: Definition, axes: dict[str, int]) -> dict[int, str]:
    """Unambiguous size -> sharded axis name at these axis values."""
    sharded = set(sharded_axes(definition))
    others = {value for name, value in axes.items() if name not in sharded}
    sizes: dict[int, str] = {}
    for name in sorted(sharded):
        value = axes.get(name)
        if value is not None and value > 1 and value not in others:
            sizes.setdefault(value, name)
    return sizes


def shard_findings(call, sizes: dict[int, str]) -> list[str]:
    """Run ``call()`` and say where it reduces over a sharded dim or uses a partial sum nonlinearly."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    partial: set[int] = set()
    keep: list = []  # holds every marked tensor so that no id is reused during the run
    findings: dict[str, str] = {}

    def is_partial(value) -> bool:
        return isinstance(value, torch.Tensor) and id(value) in partial

    def mark(out) -> None:
        for value in tree_flatten(out)[0]:
            if isinstance(value, torch.Tensor):
                partial.add(id(value))
                keep.append(value)

    def note(key: str, message: str) -> None:
        findings.setdefault(key, message)

    def reduced_dims(func, name: str, args, kwargs) -> list[int]:
        tensor = args[0]
        if not isinstance(tensor, torch.Tensor) or tensor.dim() == 0:
            return []
        if name in ("max", "min") and func._overloadname not in ("dim", "default"):
            return []  # elementwise max/min of two tensors
        if name in ("native_layer_norm", "rms_norm", "_fused_rms_norm"):
            normalized = args[1] if len(args) > 1 else kwargs.get("normalized_shape", ())
            return list(range(tensor.dim() - len(normalized), tensor.dim()))
        if name == "native_group_norm":
            return [1]
        position = {"topk": 2, "norm": 2, "linalg_vector_norm": 2}.get(name, 1)
        dim = args[position] if len(args) > position else kwargs.get("dim", _DEFAULT_DIM.get(name))
        if isinstance(dim, (torch.Tensor, torch.dtype)):
            dim = None
        if dim is None or (isinstance(dim, (list, tuple)) and not dim):
            return list(range(tensor.dim()))
        dims = dim if isinstance(dim, (list, tuple)) else [dim]
        return [d % tensor.dim() for d in dims if isinstance(d, int)]

    def contraction_size(name: str, args) -> int | None:
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        first = tensors[1] if name in ("addmm", "baddbmm", "addbmm", "addmv") and len(tensors) > 1 else tensors[0]
        return int(first.shape[-1]) if first.dim() else None

    class Tracer(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = func.overloadpacket.__name__.rstrip("_")
            flat = [v for v in tree_flatten((args, kwargs))[0] if isinstance(v, torch.Tensor)]
            partial_in = [v for v in flat if is_partial(v)]
            if name in _SHAPE_ONLY:
                return out
            if not partial_in and name in _REDUCTIONS and name not in _CONTRACTIONS:
                tensor = args[0] if args and isinstance(args[0], torch.Tensor) else None
                if tensor is not None:
                    for dim in reduced_dims(func, name, args, kwargs):
                        size = int(tensor.shape[dim])
                        if size in sizes:
                            note(
                                f"reduce:{name}:{size}",
                                f"{name} reduces over a sharded dim ({sizes[size]} = {size}): its statistic needs "
                                "every rank's share, which one rank does not hold",
                            )
            if name in _CONTRACTIONS:
                size = contraction_size(name, args)
                if partial_in or (size is not None and size in sizes):
                    if (
                        name in ("addmm", "baddbmm", "addbmm", "addmv")
                        and not partial_in
                        and isinstance(args[0], torch.Tensor)
                        and bool(args[0].ne(0).any())
                    ):
                        assert size is not None  # without partial inputs, only a sharded size gets here
                        note(
                            f"bias:{name}",
                            f"{name} adds a bias to the partial sum of a row-parallel "
                            f"projection over {sizes[size]}: every rank would add it, TP times in all",
                        )
                    mark(out)
                return out
            if not partial_in:
                return out
            if name in _LINEAR or (name in ("copy",) and is_partial(args[1] if len(args) > 1 else None)):
                mark(out)
                return out
            if name in _SCALING:
                if len(partial_in) == 1 and not (name == "div" and len(args) > 1 and is_partial(args[1])):
                    mark(out)
                    return out
            if name in _ADDING:
                others = [v for v in flat if not is_partial(v) and v.numel() > 1 and bool(v.ne(0).any())]
                if not others:
                    mark(out)
                    return out
                note(
                    f"add:{name}",
                    f"{name} adds a value every rank holds (a residual or a bias) to this rank's "
                    "partial sum before the all-reduce: it would be counted once per rank",
                )
                return out
            note(
                f"use:{name}",
                f"{name} is applied to this rank's partial sum (the output of a row-parallel "
                "projection) before the all-reduce that completes it",
            )
            return out

    with Tracer():
        call()
    return list(findings.values())
