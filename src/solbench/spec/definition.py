"""The Definition schema: what a problem computes (axes, tensors, reference program)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from solbench.spec.dtypes import DTYPES
from solbench.spec.expressions import ExpressionError, evaluate_axis_expression, names_in, parse_expression


def tag_value(tags: Iterable[object], key: str) -> str | None:
    """The value of the first ``KEY:VALUE`` tag (``set:L1`` gives ``L1`` for ``set``), or None.

    Takes a plain list so callers may read a raw ``definition.json`` without loading its workloads;
    entries that are not strings are skipped there.
    """
    prefix = f"{key}:"
    return next((t.removeprefix(prefix) for t in tags if isinstance(t, str) and t.startswith(prefix)), None)


class _Upstream(BaseModel):
    """Upstream files may carry fields we do not know; keep them (and report them) instead of failing."""

    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)


class ConstAxis(_Upstream):
    type: Literal["const"]
    value: int = Field(ge=0)
    """The fixed size of this axis."""
    description: str | None = None


class VarAxis(_Upstream):
    type: Literal["var"]
    """The size is given by each workload."""
    description: str | None = None


class ExprAxis(_Upstream):
    type: Literal["expr"]
    expression: str
    """Integer arithmetic over other axes, e.g. ``attention_head_dim // 2``."""
    description: str | None = None

    @field_validator("expression")
    @classmethod
    def _parses(cls, value: str) -> str:
        try:
            parse_expression(value)
        except ExpressionError as error:
            raise ValueError(str(error)) from None
        return value


Axis = Annotated[ConstAxis | VarAxis | ExprAxis, Field(discriminator="type")]


class TensorSpec(_Upstream):
    shape: list[str | int] | None
    """Axis names (or literal sizes); ``null`` means a Python scalar."""
    dtype: str
    description: str | None = None

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        if value not in DTYPES:
            raise ValueError(f"unknown dtype {value!r} (known: {', '.join(DTYPES)})")
        return value

    @property
    def is_scalar(self) -> bool:
        return self.shape is None


class Definition(_Upstream):
    name: str = Field(min_length=1)
    op_type: str | None = None
    description: str | None = None
    axes: dict[str, Axis]
    inputs: dict[str, TensorSpec]
    outputs: dict[str, TensorSpec] = Field(min_length=1)
    reference: str
    """Python source with a top-level ``run`` taking the inputs in order."""
    custom_inputs_entrypoint: str | None = None
    """Name of a function in `reference` that builds inputs: ``f(axes_and_scalars, device) -> dict``."""
    constraints: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Definition:
        for kind, tensors in (("inputs", self.inputs), ("outputs", self.outputs)):
            for tensor_name, tensor in tensors.items():
                for i, dim in enumerate(tensor.shape or []):
                    if isinstance(dim, str) and not dim.isdigit() and dim not in self.axes:
                        raise ValueError(
                            f"{kind}.{tensor_name}.shape[{i}]: unknown axis {dim!r} (known: {', '.join(self.axes)})"
                        )
        shadowed = set(self.inputs) & set(self.axes)
        if shadowed:
            raise ValueError(f"inputs: names also used as axes: {', '.join(sorted(shadowed))}")
        clash = set(self.inputs) & set(self.outputs)
        if clash:
            raise ValueError(f"outputs: names also used as inputs: {', '.join(sorted(clash))}")
        for axis_name, axis in self.axes.items():
            if isinstance(axis, ExprAxis):
                unknown = names_in(axis.expression) - set(self.axes)
                if unknown:
                    raise ValueError(
                        f"axes.{axis_name}.expression: unknown axis {sorted(unknown)[0]!r} "
                        f"(known: {', '.join(self.axes)})"
                    )
        for i, constraint in enumerate(self.constraints):
            try:
                parse_expression(constraint)
            except ExpressionError as error:
                raise ValueError(f"constraints[{i}]: {error}") from None
        self._check_reference()
        self.axis_order()  # raises on cycles
        return self

    def _check_reference(self) -> None:
        try:
            module = ast.parse(self.reference)
        except SyntaxError as error:
            raise ValueError(f"reference: Python syntax error at line {error.lineno}: {error.msg}") from None
        functions = {n.name for n in module.body if isinstance(n, ast.FunctionDef)}
        if "run" not in functions:
            raise ValueError("reference: no top-level function 'run'")
        run = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "run")
        parameters = [a.arg for a in run.args.posonlyargs + run.args.args]
        if parameters != list(self.inputs):
            raise ValueError(
                f"reference: run({', '.join(parameters)}) must take the inputs in order: run({', '.join(self.inputs)})"
            )
        if self.custom_inputs_entrypoint and self.custom_inputs_entrypoint not in functions:
            raise ValueError(
                f"custom_inputs_entrypoint: no top-level function {self.custom_inputs_entrypoint!r} in reference"
            )

    def axis_order(self) -> list[str]:
        """Axes sorted so that each expression comes after the axes it reads."""
        order: list[str] = []
        visiting: set[str] = set()

        def visit(name: str) -> None:
            if name in order:
                return
            if name in visiting:
                raise ValueError(f"axes.{name}.expression: circular definition")
            visiting.add(name)
            axis = self.axes[name]
            if isinstance(axis, ExprAxis):
                for dependency in sorted(names_in(axis.expression)):
                    visit(dependency)
            visiting.discard(name)
            order.append(name)

        for axis_name in self.axes:
            visit(axis_name)
        return order

    def tag(self, key: str) -> str | None:
        """The value of this definition's first ``KEY:VALUE`` tag, or None (see `tag_value`)."""
        return tag_value(self.tags, key)

    @property
    def var_axes(self) -> list[str]:
        return [n for n, a in self.axes.items() if isinstance(a, VarAxis)]

    def resolve_axes(self, values: dict[str, int], *, const_overrides: bool = False) -> dict[str, int]:
        """All axis sizes for a workload's `var` values; raises ValueError naming the axis.

        `const_overrides`: a value given for a `const` axis replaces the definition's (expressions follow it).
        Only CPU-tier workloads may carry one (see spec/tiers.py): the loader checks that, and everything that
        resolves a loaded workload's axes (`Problem.axes_of`) honours it."""
        unknown = set(values) - set(self.axes)
        if unknown:
            raise ValueError(f"axes.{sorted(unknown)[0]}: not an axis of {self.name} (known: {', '.join(self.axes)})")
        resolved: dict[str, int] = {}
        for name in self.axis_order():
            axis = self.axes[name]
            if isinstance(axis, ConstAxis):
                if name in values and values[name] != axis.value and not const_overrides:
                    raise ValueError(
                        f"axes.{name}: {values[name]} given for a const axis of size {axis.value} "
                        "(only a CPU-tier workload, in workload.cpu.jsonl, may override a const axis)"
                    )
                resolved[name] = values[name] if const_overrides and name in values else axis.value
            elif isinstance(axis, VarAxis):
                if name not in values:
                    raise ValueError(f"axes.{name}: missing value for var axis")
                resolved[name] = values[name]
            else:
                try:
                    resolved[name] = evaluate_axis_expression(axis.expression, resolved)
                except ExpressionError as error:
                    raise ValueError(f"axes.{name}.expression: {error}") from None
                if name in values and values[name] != resolved[name]:
                    raise ValueError(f"axes.{name}: {values[name]} given, expression gives {resolved[name]}")
        return resolved

    def shape_of(self, tensor: TensorSpec, axes: dict[str, int]) -> tuple[int, ...] | None:
        if tensor.shape is None:
            return None
        return tuple(int(d) if isinstance(d, int) or d.isdigit() else axes[d] for d in tensor.shape)

    def unknown_fields(self) -> list[str]:
        """Fields present in the file that this schema does not know (reported as warnings)."""
        return sorted(self.model_extra or {})
