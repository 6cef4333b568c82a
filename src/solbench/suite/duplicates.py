"""Problems that compute the same thing under two names.

Two problems are **exact duplicates** when their tensor inputs and outputs have the same dtypes and
the same fixed sizes and, on the same inputs, their references agree within the tolerance: the same
kernel would be scored twice (``L1/gemma-2-9b_hf_norm`` and ``L1/gemma-2-9b_rmsnorm_1p_h3584`` are
one Gemma RMSNorm, one written by hand and one extracted). **Near duplicates** differ only in dtypes
and agree once the inputs are cast (one model's module in float32 and in bfloat16). Names, axis
names and scalar inputs (``eps``) do not matter: tensors are matched by position, each reference
takes its own scalars from its smallest workload.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

from solbench.spec.definition import ConstAxis
from solbench.spec.problem import Problem
from solbench.spec.workload import ScalarInput


@dataclass(frozen=True)
class Duplicate:
    first: str
    second: str
    exact: bool


def _shape(problem: Problem, shape) -> tuple:
    axes = problem.definition.axes

    def dimension(d) -> int | str:
        axis = axes.get(d)
        if isinstance(axis, ConstAxis):
            return axis.value
        return int(d) if isinstance(d, int) or str(d).isdigit() else "*"

    return tuple(dimension(d) for d in shape)


def signature(problem: Problem, with_dtypes: bool = True) -> tuple:
    definition = problem.definition
    tensors = [
        (str(t.dtype) if with_dtypes else "", _shape(problem, t.shape))
        for t in definition.inputs.values()
        if t.shape is not None
    ]
    outputs = [
        (str(t.dtype) if with_dtypes else "", _shape(problem, t.shape or ())) for t in definition.outputs.values()
    ]
    return tuple(tensors), tuple(outputs)


def find_duplicates(problems: list[Problem]) -> list[Duplicate]:
    """Pairs of problems (by name, in the order given) that compute the same outputs."""
    groups: dict[tuple, list[Problem]] = defaultdict(list)
    for problem in problems:
        if problem.workloads and any(t.shape is not None for t in problem.definition.inputs.values()):
            groups[signature(problem, with_dtypes=False)].append(problem)
    found = []
    for members in groups.values():
        for first, second in combinations(members, 2):
            exact = signature(first) == signature(second)
            try:
                same = _agree(first, second)
            except Exception:
                same = False
            if same:
                found.append(Duplicate(first.name, second.name, exact))
    return found


def _agree(first: Problem, second: Problem) -> bool:
    import torch

    from solbench.evaluation.correctness import within_tolerance
    from solbench.evaluation.reference import ReferenceProgram
    from solbench.spec.inputs import InputContext, generate_inputs
    from solbench.suite.reference_workloads import smallest_workload

    workload = smallest_workload(first)
    programs = [ReferenceProgram(p.definition, "cpu") for p in (first, second)]
    try:
        context = InputContext(first, workload, first.axes_of(workload), "cpu")
        inputs = generate_inputs(context, 1234, programs[0].module)
        tensors = [v for v, spec in zip(inputs, first.definition.inputs.values()) if spec.shape is not None]
        truth = programs[0].run(inputs)
        own = smallest_workload(second)
        arguments, position = [], 0
        for name, spec in second.definition.inputs.items():
            if spec.shape is None:
                descriptor = own.inputs.get(name)
                if not isinstance(descriptor, ScalarInput):
                    return False
                arguments.append(descriptor.value)
            else:
                value = tensors[position]
                position += 1
                wanted = getattr(torch, str(spec.dtype))
                arguments.append(value.to(wanted) if value.dtype != wanted else value)
        outputs = programs[1].run(arguments)
    finally:
        for program in programs:
            program.close()
    loosest = max((workload.effective_tolerance, own.effective_tolerance), key=lambda t: t.max_atol + t.max_rtol)
    return len(outputs) == len(truth) and all(
        within_tolerance(
            out.float() if out.is_floating_point() else out, ref.float() if ref.is_floating_point() else ref, loosest
        )
        for out, ref in zip(outputs, truth)
    )
