"""A generator that restates a const axis as a literal (SOL-ExecBench L1/018's 262,144-position KV cache) still gets
a CPU tier: its local follows the axis, the const axis is sized down, and the reference is run on each derived
workload so that what the generator assumes of the constant (cache positions below the cache length) holds."""

import json

import pytest

from conftest import write_problem
from solbench.spec import load_problem
from solbench.spec.generator_constants import bind_generator_constants, bound_constants
from solbench.suite.tiers import MAX_FLOOR_BYTES, derive_cpu_tier, workload_bytes

GENERATOR = """import torch

def get_inputs(axes, device):
    batch, seq, start = axes["batch"], axes["seq"], axes["start"]
    positions = 4194304
    dim = 64
    cache = torch.randn(batch, positions, dim, device=device)
    new = torch.randn(batch, seq, dim, device=device)
    where = torch.arange(start, start + seq, device=device)
    return {"cache": cache, "new": new, "where": where}

def run(cache, new, where):
    out = cache.clone()
    out[:, where] = new
    return out
"""
CACHE = {  # float32 [batch, 4 Mi positions, 64]: 1 GiB in and 1 GiB out at batch 1, more than any CPU tier allows
    "name": "cache_append",
    "axes": {
        "batch": {"type": "var"},
        "seq": {"type": "var"},
        "start": {"type": "var"},
        "positions": {"type": "const", "value": 4194304},
        "dim": {"type": "const", "value": 64},
    },
    "custom_inputs_entrypoint": "get_inputs",
    "inputs": {
        "cache": {"shape": ["batch", "positions", "dim"], "dtype": "float32"},
        "new": {"shape": ["batch", "seq", "dim"], "dtype": "float32"},
        "where": {"shape": ["seq"], "dtype": "int64"},
    },
    "outputs": {"out": {"shape": ["batch", "positions", "dim"], "dtype": "float32"}},
    "reference": GENERATOR,
}
CUSTOM = {"cache": {"type": "custom"}, "new": {"type": "custom"}, "where": {"type": "custom"}}


def _problem(tmp_path, reference=GENERATOR):
    workloads = [
        {"uuid": f"w{i}", "axes": {"batch": b, "seq": s, "start": p}, "inputs": CUSTOM}
        for i, (b, s, p) in enumerate([(1, 16, 0), (2, 64, 300), (1, 512, 1000), (4, 256, 2000)])
    ]
    return write_problem(tmp_path / "cache_append", {**CACHE, "reference": reference}, workloads)


def test_only_a_generator_local_named_and_sized_as_a_const_axis_is_bound(tmp_path):
    problem = load_problem(_problem(tmp_path), "gpu")
    assert [(c.axis, c.value) for c in bound_constants(problem.definition)] == [("positions", 4194304), ("dim", 64)]
    source = bind_generator_constants(problem.definition)
    assert "    positions = axes.get('positions', 4194304)\n" in source
    assert "    dim = axes.get('dim', 64)\n" in source
    assert (
        source.replace("axes.get('positions', 4194304)", "4194304").replace("axes.get('dim', 64)", "64") == GENERATOR
    )  # nothing else changes: not `run`, not the other statements
    other = problem.definition.model_copy(update={"reference": GENERATOR.replace("dim = 64", "dim = 32")})
    assert [c.axis for c in bound_constants(other)] == ["positions"]  # a different value is not the axis


def test_a_generator_constant_gets_a_cpu_tier_the_reference_runs_on(tmp_path):
    folder = _problem(tmp_path)
    assert workload_bytes(load_problem(folder, "gpu"), {"batch": 1, "seq": 16, "start": 0}) > MAX_FLOOR_BYTES
    result = derive_cpu_tier(folder, analyze=False, write=True)
    assert result.action == "written", result.reason
    assert "positions 4194304 -> " in result.reason and "the reference ran on each" in result.reason
    problem = load_problem(folder, "cpu")
    for workload in problem.workloads:
        axes = problem.axes_of(workload)
        assert problem.const_overrides(workload).keys() == {"positions"}  # the outer dimension of the cache
        assert axes["start"] + axes["seq"] <= axes["positions"]  # found by running the reference, declared nowhere
        assert workload_bytes(problem, workload) <= 32_000_000
    published = load_problem(folder, "gpu")
    assert json.loads((folder / "workload.jsonl").read_text().splitlines()[0])["axes"] == {
        "batch": 1,
        "seq": 16,
        "start": 0,
    }
    assert all(published.const_overrides(w) == {} for w in published.workloads)


def test_a_literal_used_beyond_the_generator_statement_keeps_the_axis_and_says_why(tmp_path):
    reference = GENERATOR.replace("out = cache.clone()", "out = cache.clone()[:, :4194304, :64]")
    result = derive_cpu_tier(_problem(tmp_path, reference), analyze=False)
    assert result.action == "skipped"
    assert "no const axis could be sized down" in result.reason
    assert "is 1x4194304x64 (1.1 GB)" in result.reason  # the cache (in and out) names its size


@pytest.mark.slow
def test_the_reference_passes_as_a_solution_on_the_derived_tier(tmp_path, probed_home):
    import os
    import subprocess
    import sys

    folder = _problem(tmp_path)
    derive_cpu_tier(folder, analyze=False, write=True)
    out = tmp_path / "run"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "solbench",
            "run",
            str(folder),
            "--device",
            "cpu",
            "--tier",
            "cpu",
            "--rounds",
            "1",
            "--budget",
            "0.02",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **probed_home},
    )
    summary = json.loads((out / "summary.json").read_text())
    [entry] = summary["problems"]
    assert entry["passed"] == entry["workloads"] >= 4, run.stdout[-3000:] + run.stderr[-3000:]
    traces = [json.loads(line) for f in out.rglob("*.jsonl") for line in f.read_text().splitlines() if line]
    assert all(t["evaluation"]["solbench"]["const_overrides"]["positions"] < 4194304 for t in traces)
