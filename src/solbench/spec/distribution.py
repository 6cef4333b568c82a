"""A statistical correctness check for outputs that are samples: the declaration and its fit to a definition.

A sampler that draws from the right distribution with other random numbers than the reference returns other
tokens, so an elementwise comparison rejects it, and it cannot tell a biased sampler from a fair one. A workload
whose outputs are samples declares `tolerance.distribution` instead: the evaluator draws many samples from the
reference and from the solution and compares their distributions (evaluation/distribution_check.py,
docs/evaluate.md "Outputs that are samples"). The field is solbench's own: SOL-ExecBench files never carry it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from solbench.spec.definition import Definition, ExprAxis
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.expressions import names_in


class DistributionCheck(BaseModel):
    """Judge the outputs by the distribution of `draws` samples per row, not element by element."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    kind: Literal["distribution"]
    metric: Literal["total_variation"] = "total_variation"
    """Total variation distance between the reference's and the solution's empirical distributions of a row."""
    draws: int = Field(ge=20, le=1_000_000)
    """N: samples drawn per checked row, from the reference and from the solution each."""
    draw_axis: str = Field(min_length=1)
    """The axis whose entries are independent requests (a batch): it leads every output, and one entry of it (a
    row) is one sample; the evaluator repeats the checked rows along it to draw many samples in one call."""
    random_inputs: tuple[str, ...] = ()
    """Floating inputs that carry the randomness (uniform numbers in [0, 1)): drawn afresh for every sample, and
    independently for the reference and the solution. Empty where the reference draws from torch's generator."""
    rows: int = Field(default=4, ge=1, le=1024)
    """How many rows of the first round's inputs are checked (drawn at random; all of them when fewer)."""
    cells: int = Field(default=8, ge=2, le=64)
    """K: the outcomes are grouped into at most K cells, the K - 1 most frequent in a separate pilot sample of the
    reference and one cell for all others; the bound grows with K."""
    false_failure: float = Field(default=1e-6, gt=0, lt=0.5)
    """The largest probability that a correct solution fails the check (all rows together)."""
    max_distance: float | None = Field(default=None, gt=0, le=1)
    """A fixed bound on the distance; absent, it is derived from N, K, the rows and `false_failure`."""


def declaration_problem(check: DistributionCheck, definition: Definition) -> tuple[str, str] | None:
    """(field inside the declaration, why) where `check` cannot apply to `definition`'s inputs and outputs, or None."""
    axis = check.draw_axis
    if axis not in definition.axes:
        return "draw_axis", f"{axis!r} is not an axis of {definition.name} (known: {', '.join(definition.axes)})"
    derived = {
        name
        for name, spec in definition.axes.items()
        if isinstance(spec, ExprAxis) and axis in names_in(spec.expression)
    }
    for kind, tensors in (("inputs", definition.inputs), ("outputs", definition.outputs)):
        for name, tensor in tensors.items():
            dims = [str(d) for d in tensor.shape or []]
            if derived & set(dims):
                return "draw_axis", f"{kind}.{name} has an axis computed from {axis!r}: its rows cannot be repeated"
            if dims.count(axis) > 1:
                return "draw_axis", f"{kind}.{name} has {axis!r} more than once: its rows cannot be repeated"
            if kind == "outputs" and (not dims or dims[0] != axis):
                return "draw_axis", f"output {name!r} does not lead with {axis!r}, so its rows are not the samples"
    for index, name in enumerate(check.random_inputs):
        tensor = definition.inputs.get(name)
        if tensor is None:
            return f"random_inputs[{index}]", f"{name!r} is not an input of {definition.name}"
        if axis not in [str(d) for d in tensor.shape or []]:
            return f"random_inputs[{index}]", f"input {name!r} has no {axis!r} axis: the rows would share it"
        dtype = lookup_dtype(tensor.dtype)
        if not dtype.is_floating or dtype.is_low_precision_float:
            return (
                f"random_inputs[{index}]",
                f"input {name!r} is {tensor.dtype}; uniform numbers need a float of 16 bits or more",
            )
    if len(set(check.random_inputs)) != len(check.random_inputs):
        return "random_inputs", "an input is named twice"
    return None
