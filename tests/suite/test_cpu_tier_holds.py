"""A derived CPU tier holds: the reference's outputs have the definition's shapes on each of its workloads (checked
at derivation, re-derived keeping the axes' published relations or dropped where they do not), and a problem
without a CPU tier says why, its small published workloads serving `--tier cpu`."""

import json
import os
import subprocess
import sys

import pytest

from conftest import VECTOR_ADD, vector_workloads, write_problem
from solbench.evaluation import EvaluationConfig
from solbench.runner.jobs import Job
from solbench.runner.worker import RunSettings, load_run_problem
from solbench.spec import load_problem
from solbench.suite.importer import import_benchmark
from solbench.suite.tier_check import check_workloads
from solbench.suite.tiers import derive_cpu_tier, workload_bytes

LAST_ROWS = {  # the output has `keep` rows sliced from `seq_len` ones: a reference that needs keep <= seq_len
    "name": "last_rows",
    "axes": {"seq_len": {"type": "var"}, "keep": {"type": "var"}, "hidden": {"type": "const", "value": 256}},
    "inputs": {
        "x": {"shape": ["seq_len", "hidden"], "dtype": "float32"},
        "keep_rows": {"shape": None, "dtype": "int64"},
    },
    "outputs": {"y": {"shape": ["keep", "hidden"], "dtype": "float32"}},
    "reference": "import torch\n\ndef run(x, keep_rows):\n    return x[-keep_rows:] * 2\n",
}
MERGED = {  # patches merged four to one: a reference that needs patches == 4 x merged
    "name": "merged_patches",
    "axes": {"patches": {"type": "var"}, "merged": {"type": "var"}, "hidden": {"type": "const", "value": 256}},
    "inputs": {"x": {"shape": ["patches", "hidden"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["merged", "hidden"], "dtype": "float32"}},
    "reference": "import torch\n\ndef run(x):\n    return x.view(-1, 4, x.shape[1]).sum(1)\n",
}


def _last_rows(uuid, seq_len, keep):
    inputs = {"x": {"type": "random"}, "keep_rows": {"type": "scalar", "value": keep}}
    return {"uuid": uuid, "axes": {"seq_len": seq_len, "keep": keep}, "inputs": inputs}


def _merged(uuid, patches, merged):
    return {"uuid": uuid, "axes": {"patches": patches, "merged": merged}, "inputs": {"x": {"type": "random"}}}


def test_a_shrink_that_breaks_an_ordering_of_the_axes_is_derived_again_keeping_it(tmp_path):
    """Halving `seq_len` (the axis furthest above its floor) below `keep` makes the reference return fewer rows than
    the definition says; the check sees it and derives the tier again with seq_len >= keep, as published."""
    sizes = [(64, 64), (16384, 1024), (8192, 512)]
    folder = write_problem(tmp_path / "p", LAST_ROWS, [_last_rows(f"w{i}", *s) for i, s in enumerate(sizes)])
    result = derive_cpu_tier(folder, max_bytes=1_000_000, analyze=False, write=True)
    assert result.action == "written"
    assert "'y' is float32[256, 256], the definition says float32[512, 256]" in result.adjusted
    assert "{'seq_len': 256, 'keep': 512}" in result.adjusted and "(seq_len >= keep)" in result.adjusted
    cpu = load_problem(folder, "cpu")
    assert len(cpu.workloads) >= 4 and all(w.axes["seq_len"] >= w.axes["keep"] for w in cpu.workloads)
    assert all(workload_bytes(cpu, w) <= 1_000_000 for w in cpu.workloads)
    assert all(v.disagreement is None for v in check_workloads(cpu, cpu.workloads))


def test_axes_published_in_a_fixed_ratio_are_halved_together_where_one_alone_broke_the_reference(tmp_path):
    sizes = [(64, 16), (16384, 4096), (8192, 2048)]
    folder = write_problem(tmp_path / "p", MERGED, [_merged(f"w{i}", *s) for i, s in enumerate(sizes)])
    result = derive_cpu_tier(folder, max_bytes=1_000_000, analyze=False)
    assert "the definition says float32[16, 256]" in result.adjusted and "(patches = 4 x merged)" in result.adjusted
    assert "dropped" not in result.adjusted and len(result.workloads) >= 4
    for workload in result.workloads:
        assert workload.axes["patches"] == 4 * workload.axes["merged"]
        assert workload_bytes(load_problem(folder, "gpu"), workload) <= 1_000_000  # halved together, so they shrink


def test_workloads_the_reference_disagrees_on_with_no_relation_to_keep_are_dropped(tmp_path):
    """One var axis, so no relation to keep: the workloads the reference gets wrong go, the note names one."""
    clipped = {
        **VECTOR_ADD,
        "name": "clipped",
        "reference": "import torch\n\ndef run(x, y):\n    return (x + y)[:100]\n",
    }
    folder = write_problem(tmp_path / "p", clipped, vector_workloads(64, 1 << 22))
    result = derive_cpu_tier(folder, max_bytes=1_000_000, analyze=False)
    assert result.action == "written" and [w.axes["N"] for w in result.workloads] == [64]
    assert "dropped" in result.adjusted and "is float32[100], the definition says float32[" in result.adjusted
    everywhere = {**clipped, "reference": "import torch\n\ndef run(x, y):\n    return (x + y)[:1]\n"}
    write_problem(tmp_path / "p", everywhere, vector_workloads(64, 1 << 22))
    skipped = derive_cpu_tier(folder, max_bytes=1_000_000, analyze=False)
    assert skipped.action == "skipped" and skipped.reason.startswith("no derived workload holds")


def test_a_reference_that_needs_values_runs_for_real_where_a_relation_of_the_axes_is_broken(tmp_path):
    """`nonzero` stops a shape-only run; the workload that breaks keep <= seq_len then runs for real (and fails
    there), the others are noted as not checked."""
    routed = {
        **LAST_ROWS,
        "reference": LAST_ROWS["reference"].replace("x[-keep_rows:]", "x[-keep_rows:][x.ne(7).any(1).nonzero()[:, 0]]"),
    }
    sizes = [(64, 64), (16384, 1024), (8192, 512)]
    folder = write_problem(tmp_path / "p", routed, [_last_rows(f"w{i}", *s) for i, s in enumerate(sizes)])
    result = derive_cpu_tier(folder, max_bytes=1_000_000, analyze=False)
    assert "{'seq_len': 256, 'keep': 512}: the reference's output 'y' is float32[256, 256]" in result.adjusted
    assert "not checked (the reference needs input values: DynamicOutputShapeException" in result.reason
    assert all(w.axes["seq_len"] >= w.axes["keep"] for w in result.workloads)


def test_small_published_workloads_get_a_note_and_serve_the_cpu_tier_of_a_run(tmp_path):
    write_problem(
        tmp_path / "src" / "L1" / "001_vector_add", {**VECTOR_ADD, "name": "001_vector_add"}, vector_workloads(8, 16)
    )
    report = import_benchmark(tmp_path / "src", tmp_path / "out")
    [note] = report.notes_of("no-cpu-tier")
    assert note.problem == "L1/001_vector_add" and note.message.startswith(
        "published workloads already small: used as they are"
    )
    folder = tmp_path / "out" / "L1" / "001_vector_add"
    assert not (folder / "workload.cpu.jsonl").exists()
    settings = RunSettings(config=EvaluationConfig(device="cpu"), out=tmp_path / "run", tier="cpu")
    problem = load_run_problem(Job(folder, "001_vector_add", "L1", "reference"), settings)
    assert len(problem.workloads) == 2 and "used as they are" in problem.tier_note


@pytest.mark.slow  # one `solbench run` process (about 5 s)
def test_run_with_tier_cpu_evaluates_small_published_workloads_and_says_so(tmp_path):
    write_problem(
        tmp_path / "suite" / "L1" / "001_vector_add", {**VECTOR_ADD, "name": "001_vector_add"}, vector_workloads(8, 16)
    )
    command = ["run", tmp_path / "suite", "--tier", "cpu", "--rounds", "1", "--budget", "0.05", "-j", "1"]
    ran = subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, command), "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert ran.returncode == 0, ran.stderr
    assert "2 PASSED" in ran.stderr and "published workloads (small: no CPU tier needed)" in ran.stderr
    traces = [
        json.loads(line) for path in (tmp_path / "run").rglob("*.jsonl") for line in path.read_text().splitlines()
    ]
    assert {t["evaluation"]["solbench"]["tier"] for t in traces} == {"gpu"}  # the published workloads, as they are
