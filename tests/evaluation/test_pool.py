"""Warm spare sandboxes and reused reference timings: what a loop over many candidates of one problem skips.

A spare is a sandbox no solution ran in: every evaluation gets one for good, and the pool's spares are never
processes a solution's code has run in."""

import os
import re
from dataclasses import replace

import pytest

from conftest import make_solution, vector_add_problem  # noqa: F401  (fixture)
from solbench.evaluation import ReferenceTimings, SandboxPool, evaluate
from solbench.evaluation.confinement import SandboxLimits
from solbench.evaluation.reference_timing import reference_timing_key
from solbench.sandbox.measure import TimingPlan
from solbench.spec import load_problem
from solbench.spec.trace import TimingSummary

PID_REPORTING = "import os\nprint(f'solution pid={os.getpid()}')\ndef run(x, y):\n    return x + y\n"


def _pids(traces) -> set[int]:
    return {int(pid) for trace in traces for pid in re.findall(r"solution pid=(\d+)", trace.evaluation.log)}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_each_evaluation_gets_a_spare_no_solution_ran_in_and_the_pool_never_keeps_one_that_did(
    vector_add_problem, fast_config
):
    problem = load_problem(vector_add_problem)
    with SandboxPool.for_config(fast_config) as pool:
        seen: set[int] = set()
        for _ in range(2):
            spare = pool.ready_pids[0]
            traces = evaluate(problem, make_solution(PID_REPORTING), fast_config, sandboxes=pool)
            assert [t.evaluation.status.value for t in traces] == ["PASSED", "PASSED"], traces[0].evaluation.log
            pids = _pids(traces)
            assert pids == {spare}  # the solution ran in the spare that was ready, one sandbox for every workload
            assert not pids & seen  # never in a process an earlier solution ran in
            seen |= pids
            assert not seen & set(pool.ready_pids) and len(pool.ready_pids) == 1
            assert not any(_alive(pid) for pid in pids)  # the used sandbox is gone, not back in the pool
        assert pool.taken == 2
        ready = pool.ready_pids
    assert not any(_alive(pid) for pid in ready)  # closing the pool stops its spares


@pytest.mark.slow
def test_a_spare_that_died_waiting_is_never_handed_over_and_a_mismatch_gets_a_fresh_sandbox():
    limits = SandboxLimits(memory_bytes=2 << 30)
    with SandboxPool("cpu", 2 << 30) as pool:
        dead = pool.ready_pids[0]
        os.kill(dead, 9)
        pool._ready[0].process.wait(timeout=10)  # dead by the time the pool looks
        session = pool.take("cpu", limits)
        try:
            assert session.alive and session.process.pid != dead and pool.taken == 0
        finally:
            session.close()
        other = pool.take("cpu", SandboxLimits(memory_bytes=1 << 30))
        try:
            assert other.process.pid not in pool.ready_pids and pool.taken == 0
        finally:
            other.close()


def test_the_reference_timing_key_names_what_decides_t_b(vector_add_problem, fast_config):
    problem = load_problem(vector_add_problem)
    first, second = problem.workloads
    key = reference_timing_key(problem, first, fast_config)
    assert key == reference_timing_key(problem, first, replace(fast_config, static_check=False))
    assert key == reference_timing_key(
        problem, first, replace(fast_config, timing=replace(fast_config.timing, capture=True, perturb_seed=5))
    )  # set per evaluation, not a setting
    assert (
        len(
            {
                key,
                reference_timing_key(problem, second, fast_config),
                reference_timing_key(problem, first, replace(fast_config, cpu_flush="stream")),
                reference_timing_key(problem, first, replace(fast_config, rounds=3)),
                reference_timing_key(problem, first, replace(fast_config, timing=TimingPlan(budget_s=0.5))),
            }
        )
        == 5
    )


def _summary(median: float) -> TimingSummary:
    return TimingSummary(
        backend="cpu_monotonic",
        samples_ms=[median],
        warmup=1,
        median_ms=median,
        mean_ms=median,
        p10_ms=median,
        p90_ms=median,
        cv=0.0,
        rel_std_err=0.0,
        cache_flush=True,
    )


def test_known_timings_survive_on_disk_and_a_damaged_file_is_a_miss(tmp_path):
    store = ReferenceTimings(tmp_path / "t_b")
    assert store.get("ab" * 32) is None
    store.put("ab" * 32, _summary(1.5))
    again = ReferenceTimings(tmp_path / "t_b")
    found = again.get("ab" * 32)
    assert found.median_ms == 1.5 and found.reused_from == "ab" * 32 and again.reused == 1
    (tmp_path / "t_b" / "cd").mkdir()
    (tmp_path / "t_b" / "cd" / f"{'cd' * 32}.json").write_text("{not json")
    assert again.get("cd" * 32) is None


@pytest.mark.slow
def test_the_reference_is_timed_once_per_workload_and_reused_by_the_next_candidate(vector_add_problem, fast_config):
    problem = load_problem(vector_add_problem)
    config = replace(fast_config, time_reference=True)
    store = ReferenceTimings()
    first = evaluate(problem, make_solution("def run(x, y):\n    return x + y\n"), config, reference_timings=store)
    second = evaluate(
        problem,
        make_solution("import torch\ndef run(x, y):\n    return torch.add(x, y)\n"),
        config,
        reference_timings=store,
    )
    for before, after, workload in zip(first, second, problem.workloads):
        measured, reused = before.evaluation.solbench.reference_timing, after.evaluation.solbench.reference_timing
        assert measured.reused_from is None
        assert reused.reused_from == reference_timing_key(problem, workload, config)
        assert reused.samples_ms == measured.samples_ms
        assert after.evaluation.performance.reference_latency_ms == measured.median_ms
    assert store.reused == 2


@pytest.mark.slow
def test_solbench_run_keeps_a_warm_spare_per_worker(tmp_path, probed_home):
    import json
    import subprocess
    import sys

    from conftest import VECTOR_ADD, vector_workloads, write_problem

    suite = tmp_path / "suite"
    write_problem(suite / "L1" / "vector_add", VECTOR_ADD, vector_workloads(1000))
    write_problem(
        suite / "L1" / "vector_mul",
        {**VECTOR_ADD, "name": "vector_mul", "reference": "def run(x, y):\n    return x * y\n"},
        vector_workloads(500),
    )
    out = tmp_path / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "solbench",
            "run",
            str(suite),
            "-o",
            str(out),
            "--warm-sandboxes",
            "--rounds",
            "1",
            "--budget",
            "0.01",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **probed_home},
    )
    assert done.returncode == 0, done.stderr
    statuses = [
        json.loads(line)["evaluation"]["status"]
        for path in sorted((out / "traces").rglob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert statuses == ["PASSED", "PASSED"]


@pytest.mark.slow
def test_a_correctness_only_evaluation_checks_every_round_and_times_nothing(vector_add_problem, fast_config):
    problem = load_problem(vector_add_problem)
    config = replace(fast_config, time_solution=False, time_reference=True)
    passed = evaluate(problem, make_solution("def run(x, y):\n    return x + y\n"), config)
    wrong = evaluate(problem, make_solution("def run(x, y):\n    return x - y\n"), config)
    for trace in passed:
        details = trace.evaluation.solbench
        assert trace.evaluation.status.value == "PASSED" and trace.evaluation.performance is None
        assert details.timing is None and details.reference_timing is None and details.rounds == 2
    assert {t.evaluation.status.value for t in wrong} == {"INCORRECT_NUMERICAL"}
