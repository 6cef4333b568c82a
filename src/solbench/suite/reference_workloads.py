"""Which workload `solbench validate` runs a problem's reference at (and `suite.duplicates` too).

Shared by validate and the duplicate check it runs, so that the check need not import validate back.
"""

from __future__ import annotations

from solbench.spec.problem import Problem
from solbench.spec.workload import Workload


def input_elements(problem: Problem, workload: Workload) -> int:
    """How many elements the workload's tensor inputs hold: how big it is to run."""
    total = 0
    for tensor in problem.definition.inputs.values():
        shape = problem.shape_of(tensor, workload)
        if shape is not None:
            count = 1
            for dim in shape:
                count *= dim
            total += count
    return total


def reference_workloads(problem: Problem) -> list[Workload]:
    """Where the reference runs in validate: the CPU tier where the problem has one (its workloads are sized
    for this machine; the GPU tier's smallest can be a degenerate one, a single token routed to one expert),
    else every workload."""
    cpu = [w for w in problem.workloads if problem.tier_of(w) == "cpu"]
    return cpu or list(problem.workloads)


def smallest_workload(problem: Problem) -> Workload:
    """The reference workload with the fewest input elements: the cheapest place to run the reference."""
    return min(reference_workloads(problem), key=lambda w: input_elements(problem, w))


TIE_CHECK_ELEMENTS = 1 << 24
"""The tie check runs at the largest workload with at most this many input elements (or at most 4x the
smallest's, where the weights alone are larger): ties are rare per row, so it needs many rows."""


def tie_check_workload(problem: Problem) -> Workload:
    smallest = input_elements(problem, smallest_workload(problem))
    budget = max(TIE_CHECK_ELEMENTS, 4 * smallest)
    fitting = [w for w in reference_workloads(problem) if input_elements(problem, w) <= budget]
    return max(fitting, key=lambda w: input_elements(problem, w))
