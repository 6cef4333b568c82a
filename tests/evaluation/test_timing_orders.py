"""Both orders: a solution timed next to its reference is timed in halves before and after it (orders.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from solbench.evaluation import evaluate
from solbench.evaluation.orders import half_plan, in_both_orders
from solbench.evaluation.outcome import timing_summary
from solbench.sandbox.measure import TimingPlan
from solbench.spec import load_problem
from tests.conftest import VECTOR_ADD, make_solution, vector_workloads, write_problem


def test_the_solution_is_timed_before_and_after_the_reference_and_says_so(tmp_path, fast_config):
    """The reference (trusted, run in the evaluator) writes a stamp per call to a file, the solution (which may not
    write outside the sandbox) prints its own to the log; the reference's timed calls fall between the solution's."""
    stamps = tmp_path / "stamps.txt"
    reference = (
        "import time\n\ndef run(x, y):\n"
        f"    with open({str(stamps)!r}, 'a') as f:\n        f.write('%r\\n' % time.monotonic())\n"
        "    return x + y\n"
    )
    definition = {**VECTOR_ADD, "reference": reference}
    problem = load_problem(write_problem(tmp_path / "vector_add", definition, vector_workloads(1000)))
    solution = make_solution("import time\ndef run(x, y):\n    print('at', time.monotonic())\n    return x + y\n")
    config = replace(fast_config, time_reference=True, timing=replace(fast_config.timing, max_iterations=12))
    trace = evaluate(problem, solution, config)[0]
    assert trace.evaluation.status.value == "PASSED", trace.evaluation.log
    timing = trace.evaluation.solbench.timing
    assert timing.both_orders and trace.evaluation.solbench.reference_timing is not None
    assert len(timing.samples_ms) >= 2 * config.timing.min_iterations  # each half keeps the floor of samples
    assert timing.warmup >= 2 * config.timing.min_warmup
    calls = sorted(
        [(float(line.split()[1]), "s") for line in trace.evaluation.log.splitlines() if line.startswith("at ")]
        + [(float(line), "r") for line in stamps.read_text().splitlines()]
    )
    roles = "".join(role for _, role in calls)  # e.g. "rr ss r ssss r ... rrrrrrrrrr ... ssss"
    timed_reference = max(roles.split("s"), key=len)  # the reference's timed loop: its longest run of calls
    before, _, after = roles.partition(timed_reference)
    assert len(timed_reference) >= config.timing.min_iterations and "s" in before and "s" in after, roles


def test_a_correctness_only_or_reference_free_evaluation_times_in_one_go(vector_add_problem, fast_config):
    trace = evaluate(load_problem(vector_add_problem), make_solution("def run(x, y):\n    return x + y\n"), fast_config)
    assert trace[0].evaluation.solbench.timing.both_orders is False


def test_halves_share_the_budget_and_the_cap_but_keep_the_floor():
    plan = TimingPlan(budget_s=1.0, max_iterations=2001, min_iterations=5)
    half = half_plan(plan)
    assert (half.budget_s, half.max_iterations, half.min_iterations) == (0.5, 1001, 5)
    assert half_plan(TimingPlan(max_iterations=6, min_iterations=5)).max_iterations == 5


@pytest.mark.parametrize(("after_ms", "drifted"), [(1.05, False), (1.5, True)])
def test_merged_halves_pool_their_samples_and_warn_of_drift(after_ms, drifted):
    before = timing_summary("cpu", [1e-3] * 5, 3, 100, 2, ["noisy"])
    after = timing_summary("cpu", [after_ms * 1e-3] * 5, 3, 100, 2, ["noisy"])
    merged = in_both_orders(before, after)
    assert merged.both_orders and merged.warmup == 6 and len(merged.samples_ms) == 10
    assert merged.warnings[-1] == "noisy" and len(merged.warnings) == 1 + drifted
    assert ("drifted" in merged.warnings[0]) is drifted
