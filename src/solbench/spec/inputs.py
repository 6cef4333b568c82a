"""Input generation: a workload's input descriptors turned into tensors, from a seed, through a private generator.

The evaluator calls it in the trusted parent with a fresh secret seed per evaluation, so a solution
cannot know its inputs in advance; a private `torch.Generator` means nothing else in the process can
replay or disturb the stream. The speed-of-light analyzer calls it with fixed seeds
(`inputs_for_analysis`). torch is imported inside the functions that need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solbench.spec.definition import Definition, TensorSpec
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.errors import ConstraintError, SpecError
from solbench.spec.expressions import ExpressionError, evaluate
from solbench.spec.input_roles import Role, role_of
from solbench.spec.problem import WORKLOAD_FILE, Problem, find_data_file
from solbench.spec.workload import CustomInput, SafetensorsInput, ScalarInput, Workload

UPSTREAM_INT_RANGE = (-1024, 1024)  # SOL-ExecBench's range for plain integer inputs


@dataclass(frozen=True)
class InputContext:
    problem: Problem
    workload: Workload
    axes: dict[str, int]
    device: str
    data_roots: tuple[Path, ...] = ()


def generate_inputs(context: InputContext, seed: int, reference_module: Any) -> list:
    """One input set in definition order; raises SpecError/ConstraintError for bad problem data.

    Each input takes the value its own descriptor names, so a workload may mix kinds: the custom
    entrypoint's dict supplies only the inputs marked ``custom``, whatever else it returns.
    """
    import torch

    generator = torch.Generator().manual_seed(seed)
    definition = context.problem.definition
    descriptors = context.workload.inputs
    custom = (
        _custom_inputs(context, seed, reference_module)
        if any(isinstance(d, CustomInput) for d in descriptors.values())
        else {}
    )
    values = []
    for name, tensor in definition.inputs.items():
        descriptor = descriptors[name]
        if isinstance(descriptor, ScalarInput):
            values.append(descriptor.value)
        elif isinstance(descriptor, SafetensorsInput):
            values.append(_load_safetensor(context, name, tensor, descriptor))
        elif isinstance(descriptor, CustomInput):
            values.append(custom[name])
        else:
            values.append(random_input(name, tensor, definition, context.axes, generator))
    values = [v.to(context.device) if isinstance(v, torch.Tensor) else v for v in values]
    check_constraints(definition, context.axes, dict(zip(definition.inputs, values)), context.workload)
    return values


def random_input(name: str, tensor: TensorSpec, definition: Definition, axes: dict[str, int], generator):
    shape = definition.shape_of(tensor, axes)
    role = role_of(name, tensor, definition)
    if shape is None:
        return _random_tensor(name, role, tensor.dtype, (), axes, definition, generator).item()
    return _random_tensor(name, role, tensor.dtype, shape, axes, definition, generator)


def _random_tensor(name, role: Role, dtype_name, shape, axes, definition, generator):
    import torch

    dtype = lookup_dtype(dtype_name)
    if dtype.kind == "bool":
        return torch.randint(0, 2, shape, generator=generator).bool()
    if dtype.kind == "int":
        return _random_integers(name, role, dtype.torch_dtype(), shape, axes, definition, generator)
    if dtype.torch_name == "float4_e2m1fn_x2":  # random packed nibbles: every code is a valid FP4 value
        return torch.randint(0, 256, shape, generator=generator, dtype=torch.uint8).view(dtype.torch_dtype())
    values = torch.randn(shape, generator=generator, dtype=torch.float32)
    if role.kind == "positive":
        values = values.abs() + 0.1
    elif role.kind == "probability":
        values = torch.softmax(values, dim=-1) if values.dim() else values.abs()
    if dtype.is_low_precision_float:
        values = values.clamp(-2, 2)
    return values.to(dtype.torch_dtype())


def _random_integers(name, role: Role, dtype, shape, axes, definition, generator):
    import torch

    if role.kind == "offsets":
        return _random_offsets(shape, axes.get(role.total_axis) if role.total_axis else None, dtype, generator)
    if role.kind == "index":
        bound = axes[role.bound_axis] if role.bound_axis else _fallback_index_bound(name, definition, axes)
        return torch.randint(0, max(bound, 1), shape, generator=generator, dtype=dtype)
    if role.kind == "positive":
        return torch.randint(1, 1025, shape, generator=generator, dtype=dtype)
    low, high = UPSTREAM_INT_RANGE
    if dtype == torch.int8:
        low, high = -128, 128
    return torch.randint(low, high, shape, generator=generator, dtype=dtype)


def _random_offsets(shape, total: int | None, dtype, generator):
    """Non-decreasing offsets from 0; the last equals `total` when a constraint names it."""
    import torch

    count = shape[-1] - 1 if shape else 0
    if count <= 0:
        return torch.zeros(shape, dtype=dtype)
    if total is None:
        lengths = torch.randint(0, 129, (count,), generator=generator)
    else:
        cuts = torch.sort(torch.randint(0, total + 1, (count - 1,), generator=generator)).values
        lengths = torch.diff(torch.cat([torch.tensor([0]), cuts, torch.tensor([total])]))
    return torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(lengths, 0)]).to(dtype).reshape(shape)


def _fallback_index_bound(name: str, definition: Definition, axes: dict[str, int]) -> int:
    """The smallest leading dimension of a rank >= 2 floating input (the table being indexed)."""
    leading = [
        shape[0]
        for n, t in definition.inputs.items()
        if n != name
        and t.shape
        and len(t.shape) >= 2
        and lookup_dtype(t.dtype).is_floating
        and (shape := definition.shape_of(t, axes)) is not None
    ]  # not None: t.shape is given
    positive = [d for d in leading if d > 0]
    return min(positive) if positive else max(min((v for v in axes.values() if v > 0), default=1), 1)


def _custom_inputs(context: InputContext, seed: int, reference_module: Any) -> dict:
    """Call the definition's generator with the global RNG seeded secretly and restored afterwards."""
    import torch

    name = context.problem.definition.custom_inputs_entrypoint
    if name is None:
        raise SpecError(
            context.problem.root / "definition.json",
            "custom_inputs_entrypoint",
            f"workload {context.workload.uuid}: 'custom' inputs need the definition's custom_inputs_entrypoint",
        )
    function = getattr(reference_module, name)
    arguments = {**context.axes, **context.workload.scalar_inputs}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        produced = function(arguments, torch.device(context.device))
    if not isinstance(produced, dict):
        raise SpecError(
            context.problem.root / "definition.json",
            "custom_inputs_entrypoint",
            f"{name} returned {type(produced).__name__}, expected a dict of inputs",
        )
    missing = [n for n, d in context.workload.inputs.items() if isinstance(d, CustomInput) and n not in produced]
    if missing:
        raise SpecError(
            context.problem.root / "definition.json",
            "custom_inputs_entrypoint",
            f"{name} did not produce input {missing[0]!r}",
        )
    return produced


def _load_safetensor(context: InputContext, name: str, tensor: TensorSpec, descriptor: SafetensorsInput):
    from safetensors.torch import load_file

    path = find_data_file(context.problem, descriptor.path, context.data_roots)
    where = context.problem.root / WORKLOAD_FILE
    contents = load_file(str(path))
    if descriptor.tensor_key not in contents:
        raise SpecError(
            where,
            f"inputs.{name}.tensor_key",
            f"{descriptor.tensor_key!r} not in {path} (has: {', '.join(sorted(contents))})",
        )
    value = contents[descriptor.tensor_key]
    expected_shape = context.problem.definition.shape_of(tensor, context.axes)
    if expected_shape is not None and tuple(value.shape) != expected_shape:
        raise SpecError(
            where, f"inputs.{name}", f"{path} holds shape {tuple(value.shape)}, definition says {expected_shape}"
        )
    return value.to(lookup_dtype(tensor.dtype).torch_dtype()).contiguous()


def check_constraints(definition: Definition, axes: dict[str, int], inputs: dict[str, Any], workload: Workload) -> None:
    names = {**axes, **inputs}
    for index, constraint in enumerate(definition.constraints):
        try:
            holds = evaluate(constraint, names)
        except (ExpressionError, IndexError, RuntimeError, TypeError) as error:
            raise ConstraintError(None, f"constraints[{index}]", f"{constraint!r} cannot be checked: {error}") from None
        if not holds:
            raise ConstraintError(
                None, f"constraints[{index}]", f"{constraint!r} does not hold for workload {workload.uuid}"
            )


ANALYSIS_SEED = 0
"""Analysis inputs are fixed: T_SOL must not change from one run to the next. Draw d uses seed ANALYSIS_SEED + d."""


def inputs_for_analysis(
    problem: Problem, workload: Workload, reference_module: Any, data_roots: tuple[Path, ...] = (), draw: int = 0
) -> list[Any]:
    """Real CPU inputs for the speed-of-light analyzer, for references whose work depends on values."""
    axes = problem.axes_of(workload)
    return generate_inputs(
        InputContext(problem, workload, axes, "cpu", data_roots), ANALYSIS_SEED + draw, reference_module
    )
