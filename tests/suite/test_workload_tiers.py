"""Workload tiers: workload.jsonl (GPU, as published) and workload.cpu.jsonl, chosen by device or by name,
and the CPU tier derived from published workloads."""

import json

import pytest

from conftest import VECTOR_ADD, write_problem
from solbench.spec import SpecError, load_problem
from solbench.spec.tiers import CPU_WORKLOAD_FILE, default_tier
from solbench.suite.tiers import derive_cpu_tier, workload_bytes, write_cpu_tier

MASK = {  # a scalar input that mirrors an axis, a constraint, and a var axis published in multiples of 128
    "name": "masks",
    "axes": {"batch": {"type": "var"}, "seq": {"type": "var"}, "heads": {"type": "const", "value": 4}},
    "inputs": {
        "x": {"shape": ["batch", "seq", "heads"], "dtype": "float32"},
        "seq_scalar": {"shape": None, "dtype": "int64"},
        "eps": {"shape": None, "dtype": "float32"},
    },
    "outputs": {"y": {"shape": ["batch", "seq", "heads"], "dtype": "float32"}},
    "constraints": ["seq >= 128"],
    "reference": "import torch\n\ndef run(x, seq_scalar, eps):\n    assert x.shape[1] == seq_scalar\n    return "
    "x * 2\n",
}


def mask_workload(uuid, batch, seq):
    return {
        "uuid": uuid,
        "axes": {"batch": batch, "seq": seq},
        "inputs": {
            "x": {"type": "random"},
            "seq_scalar": {"type": "scalar", "value": seq},
            "eps": {"type": "scalar", "value": 1e-6},
        },
        "tolerance": {"max_atol": 1e-3, "max_rtol": 1e-3, "required_match_ratio": 0.98},
    }


@pytest.fixture
def big_problem(tmp_path):
    sizes = [(64, 8192), (32, 4096), (16, 16384), (8, 2048), (1, 128), (4, 1024)]
    return write_problem(tmp_path / "masks", MASK, [mask_workload(f"w{i}", b, s) for i, (b, s) in enumerate(sizes)])


def test_a_folder_without_cpu_tier_loads_its_published_workloads_on_any_device(tmp_path):
    folder = write_problem(
        tmp_path / "p",
        VECTOR_ADD,
        [{"uuid": "a", "axes": {"N": 8}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}}],
    )
    assert default_tier(folder, "cpu") == "gpu"
    problem = load_problem(folder, device="cpu")
    assert problem.tier == "gpu" and [w.uuid for w in problem.workloads] == ["a"] and not problem.tier_note


def test_the_cpu_tier_asked_of_a_folder_without_one_is_its_published_workloads_where_they_are_small(tmp_path):
    """`--tier cpu` runs small published workloads as they are (saying so, and the traces say `gpu`: they are the
    published ones); where one is too large the error says which, why, and what to do."""
    line = {"uuid": "a", "axes": {"N": 8}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}}
    folder = write_problem(tmp_path / "p", VECTOR_ADD, [line])
    problem = load_problem(folder, "cpu")
    assert problem.tier == "cpu" and [w.uuid for w in problem.workloads] == ["a"]
    assert "published workloads are small" in problem.tier_note and problem.tier_of(problem.workloads[0]) == "gpu"
    big = {**line, "uuid": "big", "axes": {"N": 1 << 22}}  # 3 fp32 vectors of 4 Mi elements: 50 MB
    (folder / "workload.jsonl").write_text(json.dumps(line) + "\n" + json.dumps(big) + "\n")
    with pytest.raises(
        SpecError, match=r"too large to stand in.*workload big takes 50 MB.*above the 32 MB.*suite cpu-tier"
    ):
        load_problem(folder, "cpu")


def test_tier_is_chosen_by_device_and_by_name(tmp_path):
    folder = write_problem(
        tmp_path / "p",
        VECTOR_ADD,
        [{"uuid": "big", "axes": {"N": 1 << 24}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}}],
    )
    (folder / CPU_WORKLOAD_FILE).write_text(
        json.dumps({"uuid": "small", "axes": {"N": 64}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}})
        + "\n"
    )
    assert [w.uuid for w in load_problem(folder, device="cpu").workloads] == ["small"]
    assert [w.uuid for w in load_problem(folder, device="cuda").workloads] == ["big"]
    both = load_problem(folder, "all")
    assert [(w.uuid, both.tier_of(w)) for w in both.workloads] == [("big", "gpu"), ("small", "cpu")]
    assert load_problem(folder, "cpu").tier_of(load_problem(folder, "cpu").workloads[0]) == "cpu"
    with pytest.raises(SpecError, match="tier"):
        load_problem(folder, "tpu")


def test_uuids_must_be_unique_across_tiers(tmp_path):
    line = {"uuid": "same", "axes": {"N": 8}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}}
    folder = write_problem(tmp_path / "p", VECTOR_ADD, [line])
    (folder / CPU_WORKLOAD_FILE).write_text(json.dumps(line) + "\n")
    with pytest.raises(SpecError, match=r"workload\.cpu\.jsonl.*'same' already used on workload\.jsonl line 1"):
        load_problem(folder, "all")


def test_cpu_tier_scales_var_axes_down_within_budget_and_keeps_inputs_consistent(big_problem):
    gpu = load_problem(big_problem, "gpu")
    path = write_cpu_tier(big_problem, max_bytes=2_000_000, analyze=False)
    assert path == big_problem / CPU_WORKLOAD_FILE
    assert (big_problem / "workload.jsonl").read_text().count("\n") == 6  # the published file is untouched
    cpu = load_problem(big_problem, "cpu")
    assert 4 <= len(cpu.workloads) <= 8
    assert not {w.uuid for w in cpu.workloads} & {w.uuid for w in gpu.workloads}
    for workload in cpu.workloads:
        assert workload_bytes(cpu, workload) <= 2_000_000
        assert workload.axes["seq"] >= 128 and workload.axes["seq"] % 128 == 0  # floor and granularity kept
        assert workload.inputs["seq_scalar"].value == workload.axes["seq"]  # the mirrored scalar follows
        assert workload.inputs["eps"].value == 1e-6  # other scalars stay
        assert workload.tolerance.max_atol == 1e-3
        assert workload.model_extra == {} or "required_match_ratio" not in workload.model_extra
    assert derive_cpu_tier(big_problem, max_bytes=2_000_000, analyze=False).workloads == list(cpu.workloads)


def test_problems_that_fit_or_read_files_get_no_cpu_tier(tmp_path, big_problem):
    result = derive_cpu_tier(big_problem, max_bytes=10**12, analyze=False)
    assert result.action == "not needed" and write_cpu_tier(big_problem, max_bytes=10**12, analyze=False) is None
    files = write_problem(
        tmp_path / "files",
        VECTOR_ADD,
        [
            {
                "uuid": "f",
                "axes": {"N": 8},
                "inputs": {
                    "x": {"type": "safetensors", "path": "data/x.safetensors", "tensor_key": "x"},
                    "y": {"type": "random"},
                },
            }
        ],
    )
    skipped = derive_cpu_tier(files, analyze=False)
    assert skipped.action == "skipped" and "data/x.safetensors" in skipped.reason
    assert not (files / CPU_WORKLOAD_FILE).exists()


def test_writing_removes_a_cpu_tier_that_no_longer_applies(big_problem):
    """A CPU tier derived from earlier published workloads would be loaded in their place: writing again where
    none is derived now (the workloads fit) removes it."""
    assert write_cpu_tier(big_problem, max_bytes=2_000_000, analyze=False) is not None
    assert write_cpu_tier(big_problem, max_bytes=10**12, analyze=False) is None
    assert not (big_problem / CPU_WORKLOAD_FILE).exists()


def test_suite_stats_reports_sizes_per_tier(tmp_path, big_problem):
    from solbench.suite.stats import suite_stats

    write_cpu_tier(big_problem, max_bytes=2_000_000, analyze=False)
    tiers = suite_stats(big_problem.parent).as_json()["tiers"]
    assert tiers["gpu"]["workloads"] == 6 and tiers["gpu"]["problems_with_own_file"] == 1
    assert tiers["gpu"]["median_largest_workload_bytes"] == 2 * 64 * 8192 * 4 * 4  # x and y at (64, 8192)
    assert tiers["cpu"]["median_largest_workload_bytes"] <= 2_000_000
    assert tiers["cpu"]["bytes_estimate"].startswith("size-based")


def test_a_cpu_tier_may_repeat_a_published_size_without_counting_as_duplicate(tmp_path):
    from solbench.suite.validate import ProblemValidation, _check_duplicate_workloads

    inputs = {"x": {"type": "random"}, "y": {"type": "random"}}
    folder = write_problem(
        tmp_path / "p",
        VECTOR_ADD,
        [{"uuid": "g1", "axes": {"N": 8}, "inputs": inputs}, {"uuid": "g2", "axes": {"N": 8}, "inputs": inputs}],
    )
    (folder / CPU_WORKLOAD_FILE).write_text(json.dumps({"uuid": "c1", "axes": {"N": 8}, "inputs": inputs}) + "\n")
    report = ProblemValidation(path=str(folder))
    _check_duplicate_workloads(load_problem(folder, "all"), report)
    assert [f.message for f in report.findings] == ["workload g2 duplicates g1 (same axes and inputs)"]
