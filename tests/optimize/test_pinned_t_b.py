"""T_b pinned once per problem, workload, machine and timing settings, so every environment compares a kernel with
the same T_b; a baselines file overrides a pin."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import make_solution
from optimize.candidates import FAST, baselines_file, vector_add
from solbench.optimize import make
from solbench.optimize.env import ENV_REFERENCE_SOURCE
from solbench.optimize.pinned_t_b import PIN_FOLDER, PinnedTimes, pin_keys
from solbench.sandbox import TimingPlan
from solbench.spec.problem import load_problem

HARDWARE = "H100_SXM"


def test_the_first_pin_holds_and_a_damaged_one_is_replaced(tmp_path):
    pins = PinnedTimes(tmp_path)
    assert pins.get("ab" * 32) is None
    first = pins.pin("ab" * 32, 1.5, "some CPU")
    second = pins.pin("ab" * 32, 9.9, "some CPU")  # measured at the same time by another environment
    assert second == first and pins.get("ab" * 32) == first and first.latency_ms == 1.5
    assert "reference timed once on" in first.source and "some CPU" in first.source
    [path] = (tmp_path / "ab").glob("*.json")
    path.write_text("{not json")
    assert pins.get("ab" * 32) is None
    assert pins.pin("ab" * 32, 2.5, "some CPU").latency_ms == 2.5 and pins.get("ab" * 32).latency_ms == 2.5
    assert [p.name for p in (tmp_path / "ab").iterdir()] == [path.name]  # no temporary file left behind


def test_the_default_folder_is_in_the_solbench_cache_folder(isolated_cache):
    assert PinnedTimes().folder == isolated_cache / PIN_FOLDER


def test_a_pin_key_changes_with_the_workload_and_the_timing_settings_but_not_the_held_out_split(tmp_path, fast_config):
    problem = load_problem(vector_add(tmp_path / "vector_add", 1000, 4099))
    keys = pin_keys(problem, problem.workloads, fast_config)
    assert keys.keys() == {"n1000", "n4099"} and keys["n1000"] != keys["n4099"]
    assert pin_keys(problem, problem.workloads[:1], fast_config) == {"n1000": keys["n1000"]}
    for changed in (replace(fast_config, flush_cache=False), replace(fast_config, timing=TimingPlan(budget_s=1.0))):
        assert pin_keys(problem, problem.workloads, changed)["n1000"] != keys["n1000"]
    assert pin_keys(problem, problem.workloads, replace(fast_config, timeout_s=99))["n1000"] == keys["n1000"]


@pytest.mark.slow
def test_two_environments_compare_a_kernel_with_the_same_pinned_t_b_and_a_baselines_file_overrides(
    tmp_path, fast_config, isolated_cache
):
    problem = vector_add(tmp_path / "vector_add", 1000)
    steps = []
    for index in range(2):  # two environments with result caches of their own: each would time the reference
        with make(problem, hardware=HARDWARE, config=fast_config, held_out=[], cache=tmp_path / f"cache{index}") as env:
            steps.append(env.step(make_solution(FAST)))
    [first], [second] = (step.feedback for step in steps)
    assert first.t_b_ms and second.t_b_ms == first.t_b_ms  # read from the record each step keeps
    assert first.t_b_source == second.t_b_source and "pinned as t_b/" in first.t_b_source
    assert len(list((isolated_cache / PIN_FOLDER).rglob("*.json"))) == 1
    entries = [len(list((tmp_path / f"cache{index}").rglob("*.json"))) for index in range(2)]
    assert entries == [2, 1]  # the reference and the candidate, then the candidate alone: the pin was read

    baselines = baselines_file(tmp_path / "baselines.json", HARDWARE, "n1000", latency_ms=0.05)
    with make(
        problem, hardware=HARDWARE, config=fast_config, held_out=[], baselines=baselines, warm_sandboxes=False
    ) as env:
        [overridden] = env.step(make_solution(FAST)).feedback
    assert overridden.t_b_ms == 0.05 and overridden.t_b_source == "baselines file: test"

    with make(problem, hardware=HARDWARE, config=fast_config, held_out=[], pin_t_b=False, warm_sandboxes=False) as env:
        [own] = env.step(make_solution(FAST)).feedback
    assert own.t_b_source == ENV_REFERENCE_SOURCE and own.t_b_ms != first.t_b_ms  # timed anew: its own noise
