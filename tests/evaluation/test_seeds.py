"""Secret input seeds: fresh for every evaluation, and the one recorded in a trace rebuilds that run's inputs."""

import ast

import pytest

from conftest import VECTOR_ADD, make_solution, vector_workloads, write_problem
from solbench.evaluation import evaluate
from solbench.spec import load_problem
from solbench.spec.trace import EvaluationStatus

# Prints the first values of the inputs of its first calls (the correctness rounds, in order) to its log.
RECORDER = """
import torch
CALLS = []

def run(x, y):
    CALLS.append(1)
    if len(CALLS) <= 2:
        print("inputs", x[:4].tolist(), y[:4].tolist(), flush=True)
    return x + y
"""


def _seen_inputs(trace) -> list[tuple[list[float], list[float]]]:
    lines = [line.split("inputs ", 1)[1] for line in trace.evaluation.log.splitlines() if line.startswith("inputs ")]
    return [tuple(ast.literal_eval(f"[{line.replace('] [', '], [')}]")) for line in lines]


def _rebuilt(problem, seed: int) -> tuple[list[float], list[float]]:
    try:  # issue 11 moves input generation from evaluate to spec
        from solbench.spec.inputs import InputContext, generate_inputs
    except ImportError:
        from solbench.evaluation.inputs import InputContext, generate_inputs

    workload = problem.workloads[0]
    context = InputContext(problem, workload, problem.axes_of(workload), "cpu")
    x, y = generate_inputs(context, seed, None)
    return x[:4].tolist(), y[:4].tolist()


@pytest.mark.slow
def test_each_evaluation_draws_fresh_inputs_and_the_recorded_seed_rebuilds_them(tmp_path, fast_config):
    problem = load_problem(write_problem(tmp_path / "vector_add", VECTOR_ADD, vector_workloads(64)))
    solution = make_solution(RECORDER)
    runs = [evaluate(problem, solution, fast_config)[0] for _ in range(2)]
    for trace in runs:
        assert trace.evaluation.status is EvaluationStatus.PASSED, trace.evaluation.log[-2000:]
    seeds = [trace.evaluation.solbench.input_seed for trace in runs]
    seen = [_seen_inputs(trace) for trace in runs]
    assert all(len(s) == fast_config.rounds for s in seen), seen

    assert seeds[0] != seeds[1]
    assert seen[0][0] != seen[1][0], "two evaluations gave the solution the same inputs"
    for seed, inputs in zip(seeds, seen):
        # round r draws from seed + r: the trace's seed reproduces every correctness round exactly
        assert inputs == [_rebuilt(problem, seed + r) for r in range(fast_config.rounds)]
