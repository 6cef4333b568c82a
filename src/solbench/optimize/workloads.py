"""Choosing workloads: the smallest public ones for `env.test`, and problems restricted to a subset."""

from __future__ import annotations

import math
from dataclasses import replace

from solbench.spec.problem import Problem
from solbench.spec.workload import Workload

TEST_WORKLOADS = 2
"""`env.test` checks correctness on this many public workloads, the smallest first."""


def restricted(problem: Problem, workloads: tuple[Workload, ...]) -> Problem:
    """`problem` with only `workloads` (the evaluator, the analyzer and the result cache see just these)."""
    return replace(problem, workloads=workloads)


def input_elements(problem: Problem, workload: Workload) -> int:
    """Elements over all tensor inputs of `workload` (a scalar counts 1): a proxy for how long it runs."""
    axes = problem.axes_of(workload)
    total = 0
    for tensor in problem.definition.inputs.values():
        shape = problem.definition.shape_of(tensor, axes)
        total += math.prod(shape) if shape else 1
    return total


def smallest(problem: Problem, workloads: tuple[Workload, ...], count: int = TEST_WORKLOADS) -> tuple[Workload, ...]:
    """The `count` workloads with the fewest input elements, kept in the problem's order."""
    ranked = sorted(range(len(workloads)), key=lambda i: (input_elements(problem, workloads[i]), i))[:count]
    return tuple(workloads[i] for i in sorted(ranked))
