"""Tie sensitivity: does an arbitrary order, not the computation, decide the reference's output?

A reference that takes the top-k (or sorts, or an argmax) of values with many exact ties lets the
tie-break rule -- in practice the order of its inputs along some axis -- choose the result. In
bfloat16, router logits of 128 experts tie at the top-8 cut for about 5% of tokens: the same MoE with
its experts stored in the reverse order (mathematically identical) matches only 96-98% of the
reference, under the 99% the tolerance requires, so a correct kernel can fail.

Two ways to ask:

- a problem declares a **symmetric axis** with a tag ``symmetric:AXIS`` (e.g. ``symmetric:num_experts``):
  permuting every input along every dim named AXIS permutes the outputs along theirs and changes
  nothing else. validate reverses that axis, runs the reference, un-permutes, and requires the
  tolerance to hold. Declare it only where outputs hold values, not indices into the axis.
- without a declaration, validate records the reference's ops at the smallest workload; where one
  selects by value (top-k, argmax, max/min over a dim ...) and rows tie at the cut, it moves every
  floating input by one ulp and reports (as a warning) an output that then leaves the tolerance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from solbench.spec.definition import Definition

_Result = TypeVar("_Result")
SYMMETRIC_TAG = "symmetric"
_SELECTIONS = {"topk", "argmax", "argmin", "kthvalue"}
_SELECTING_OVERLOADS = {("max", "dim"), ("min", "dim")}


def symmetric_axes(definition: Definition) -> list[str]:
    """Axes named by ``symmetric:AXIS`` tags that the definition declares (unknown names are ignored here;
    `unknown_symmetric_axes` reports them)."""
    named = [t.split(":", 1)[1] for t in definition.tags if t.startswith(f"{SYMMETRIC_TAG}:")]
    return [a for a in named if a in definition.axes]


def unknown_symmetric_axes(definition: Definition) -> list[str]:
    named = [t.split(":", 1)[1] for t in definition.tags if t.startswith(f"{SYMMETRIC_TAG}:")]
    return [a for a in named if a not in definition.axes]


def permuted_inputs(definition: Definition, inputs: list, axis: str, permutation) -> list:
    """Every tensor input permuted along each of its dims named ``axis``."""
    return [_permute(value, spec.shape, axis, permutation) for value, spec in zip(inputs, definition.inputs.values())]


def unpermuted_outputs(definition: Definition, outputs: list, axis: str, permutation) -> list:
    """Outputs of a permuted run, put back in the original order along their dims named ``axis``."""
    import torch

    inverse = torch.empty_like(permutation)
    inverse[permutation] = torch.arange(permutation.numel())
    return [_permute(value, spec.shape, axis, inverse) for value, spec in zip(outputs, definition.outputs.values())]


def _permute(value, shape, axis: str, permutation):
    import torch

    if not isinstance(value, torch.Tensor) or shape is None:
        return value
    for dim, name in enumerate(shape):
        if name == axis:
            value = value.index_select(dim, permutation.to(value.device))
    return value


def one_ulp_apart(inputs: list, seed: int = 7) -> list:
    """Every floating input moved by one ulp, up or down at random per element."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    moved = []
    for value in inputs:
        if (
            isinstance(value, torch.Tensor)
            and value.is_floating_point()
            and value.element_size() >= 2
            and value.numel()
        ):
            up = torch.rand(value.shape, generator=generator) < 0.5
            target = torch.where(
                up.to(value.device), torch.full_like(value, float("inf")), torch.full_like(value, float("-inf"))
            )
            value = torch.nextafter(value, target)
        moved.append(value)
    return moved


@dataclass(frozen=True)
class Selection:
    op: str
    dtype: str
    tied: float
    """Share of the rows whose selection cut falls between equal values."""


MEASURED_CALLS = 16
"""Calls of one op whose ties are measured (a sampling loop calls argmax once per token)."""


def recorded_selections(call: Callable[[], _Result], measure: bool = True) -> tuple[list[Selection], _Result]:
    """Run ``call()`` recording each op that selects by floating value (top-k, argmax, max over a dim ...)
    with the share of its rows tied at the cut (``measure``; else 0); returns (selections, what ``call``
    returned)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    found: dict[tuple[str, str], Selection] = {}
    calls: dict[tuple[str, str], int] = {}

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = func.overloadpacket.__name__
            if (
                (name in _SELECTIONS or (name, func._overloadname) in _SELECTING_OVERLOADS)
                and name not in ("sort", "argsort", "msort", "mode")
                and args
                and isinstance(args[0], torch.Tensor)
                and args[0].is_floating_point()
                and args[0].numel()
            ):
                dtype = str(args[0].dtype).removeprefix("torch.")
                calls[(name, dtype)] = calls.get((name, dtype), 0) + 1
                tied = _tied_share(name, args, kwargs) if measure and calls[(name, dtype)] <= MEASURED_CALLS else 0.0
                previous = found.get((name, dtype))
                if previous is None or tied > previous.tied:
                    found[(name, dtype)] = Selection(name, dtype, tied)
            return func(*args, **kwargs)

    with Recorder():
        result = call()
    return list(found.values()), result


def _tied_share(name: str, args, kwargs) -> float:
    """Rows where the value at the cut equals the first one left out."""
    values = args[0].float()
    if name == "topk":
        k = args[1]
        dim = args[2] if len(args) > 2 else kwargs.get("dim", -1)
        largest = args[3] if len(args) > 3 else kwargs.get("largest", True)
    else:
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        k = args[2] if name == "kthvalue" and len(args) > 2 else 1
        if name == "kthvalue":
            k, dim = args[1], (args[2] if len(args) > 2 else kwargs.get("dim", -1))
        largest = name in ("argmax", "max")
    if dim is None:
        values, dim = values.reshape(-1), 0
    if values.dim() == 0 or k >= values.shape[dim]:
        return 0.0
    ordered = values.topk(k + 1, dim=dim, largest=bool(largest)).values
    cut, next_value = ordered.narrow(dim, k - 1, 1), ordered.narrow(dim, k, 1)
    return float((cut == next_value).double().mean())
