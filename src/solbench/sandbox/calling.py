"""The calling convention shared by solutions and references.

Inputs are passed positionally in definition order; with destination-passing style the output
buffers follow. Returned values are normalised to one tensor per definition output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class OutputError(Exception):
    """A call returned something that is not one plain tensor per output.

    `rule` names the violated rule: ``output_count``, ``output_type`` (not a tensor) or
    ``tensor_subclass`` (a Tensor subclass, e.g. a lazy wrapper).
    """

    def __init__(self, rule: str, message: str):
        self.rule = rule
        super().__init__(message)


@dataclass(frozen=True)
class OutputSpec:
    name: str
    shape: tuple[int, ...] | None
    dtype: str


def sentinel_outputs(specs: Sequence[OutputSpec], device):
    """DPS buffers filled with values no correct kernel leaves behind: NaN, the int minimum, True."""
    import torch

    buffers = []
    for spec in specs:
        dtype = getattr(torch, spec.dtype if spec.dtype != "float4_e2m1" else "float4_e2m1fn_x2")
        shape = spec.shape or ()
        if dtype.is_floating_point and dtype.itemsize >= 2:
            buffers.append(torch.full(shape, float("nan"), dtype=dtype, device=device))
        elif dtype == torch.bool:
            buffers.append(torch.ones(shape, dtype=dtype, device=device))
        elif dtype.is_floating_point:  # fp8/fp4: fill the raw bytes with 0xFF (NaN for e4m3fn, e5m2)
            buffers.append(torch.full(shape, 255, dtype=torch.uint8, device=device).view(dtype))
        else:
            buffers.append(torch.full(shape, torch.iinfo(dtype).min, dtype=dtype, device=device))
    return buffers


def normalize_outputs(returned: Any, names: Sequence[str]) -> list:
    """Map a returned value onto the definition's outputs: a dict, a tuple/list, or one value."""
    import torch

    if isinstance(returned, dict):
        missing = [n for n in names if n not in returned]
        if missing:
            raise OutputError("output_count", f"returned dict lacks output {missing[0]!r}")
        values = [returned[n] for n in names]
    elif isinstance(returned, (tuple, list)):
        if len(returned) != len(names):
            raise OutputError(
                "output_count", f"returned {len(returned)} values for {len(names)} outputs ({', '.join(names)})"
            )
        values = list(returned)
    elif len(names) == 1:
        values = [returned]
    else:
        raise OutputError("output_count", f"returned one {type(returned).__name__} for {len(names)} outputs")
    for name, value in zip(names, values):
        if isinstance(value, torch.Tensor) and type(value) is not torch.Tensor:
            raise OutputError(
                "tensor_subclass",
                f"output {name!r} is a {type(value).__name__}, a Tensor subclass; return a plain torch.Tensor",
            )
        if not isinstance(value, torch.Tensor):
            raise OutputError("output_type", f"output {name!r} is a {type(value).__name__}, not a torch.Tensor")
    return values


def call_with_convention(fn, inputs: Sequence, outputs: Sequence | None, names: Sequence[str]) -> list:
    """Call `fn`; with DPS (`outputs` given) the buffers are the result, otherwise the return value."""
    if outputs is not None:
        fn(*inputs, *outputs)
        return list(outputs)
    return normalize_outputs(fn(*inputs), names)


def materialized(outputs: list, input_storages: frozenset[int]) -> list:
    """Outputs as the caller will read them, made inside the timed region.

    A view (a transpose, an expand) or an input handed back costs nothing to return; the copy
    that makes it a result would otherwise happen when the harness snapshots or sends it, after
    the timer stopped. Contiguous outputs that own their memory pass through untouched.
    `input_storages`: data pointers of the inputs' storages (InputRotation.storages).
    """
    import torch

    return [
        value
        if value.is_contiguous() and value.untyped_storage().data_ptr() not in input_storages
        else value.clone(memory_format=torch.contiguous_format)
        for value in outputs
    ]
