"""`solbench run`, `solbench baseline` and `solbench suite stats` on a tiny suite, through real processes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import VECTOR_ADD, solution_dict, vector_workloads, write_problem

FAST = ["--rounds", "1", "--budget", "0.01"]


def solbench(*args, env=None):
    return subprocess.run([sys.executable, "-m", "solbench", *map(str, args)], capture_output=True, text=True,
                          timeout=600, env={**os.environ, **(env or {})})


@pytest.fixture
def suite(tmp_path) -> Path:
    root = tmp_path / "suite"
    add = {**VECTOR_ADD, "tags": ["set:L1", "model:Toy", "domain:language", "pass:forward", "origin:recipe"]}
    write_problem(root / "L1" / "vector_add", add, vector_workloads(1000, 3000))
    mul = {**VECTOR_ADD, "name": "vector_mul", "op_type": "multiply",
           "tags": ["set:L2", "model:Other", "domain:vision", "pass:backward", "origin:extract"],
           "reference": "import torch\n\ndef run(x, y):\n    return x * y\n"}
    write_problem(root / "L2" / "vector_mul", mul, vector_workloads(500, 2000))
    wrong = solution_dict("import torch\n\ndef run(x, y):\n    return x - y\n", name="wrong")
    (root / "L1" / "vector_add" / "solutions").mkdir()
    (root / "L1" / "vector_add" / "solutions" / "fast.json").write_text(json.dumps(wrong))
    return root


def test_run_evaluates_every_problem_resumes_and_summarises(suite, tmp_path, probed_home):
    out = tmp_path / "run"
    first = solbench("run", suite, "-o", out, "--workers", "2", *FAST, env=probed_home)
    assert first.returncode == 0, first.stderr
    assert "[2/2]" in first.stderr and "2 PASSED" in first.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["hardware"] == "local"
    assert {s["set"]: (s["problems_passed"], s["workloads_passed"]) for s in summary["sets"]} == \
        {"L1": (1, 2), "L2": (1, 2)}
    assert all(p["score"] is not None and 0 < p["score"] < 1 for p in summary["problems"])
    traces = (out / "traces" / "L1" / "vector_add" / "reference.jsonl").read_text().splitlines()
    assert len(traces) == 2 and json.loads(traces[0])["evaluation"]["solbench"]["sol"]["hardware"] == "local"

    again = solbench("run", suite, "-o", out, *FAST, env=probed_home)
    assert again.returncode == 0 and again.stderr.count("already done") == 2
    rerun = solbench("run", suite, "-o", out, "--category", "l2", "--rerun", *FAST, env=probed_home)
    assert rerun.returncode == 0 and "L2/vector_mul" in rerun.stderr and "L1/" not in rerun.stderr


def test_a_named_solution_runs_where_shipped_and_is_skipped_elsewhere(suite, tmp_path, probed_home):
    result = solbench("run", suite, "-o", tmp_path / "r", "--solution-name", "fast", *FAST, env=probed_home)
    assert result.returncode == 0, result.stderr
    assert "vector_mul: no solution named 'fast'" in result.stderr
    assert "2 INCORRECT_NUMERICAL" in result.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert [(p["problem"], p["passed"], p["score"]) for p in summary["problems"]] == [("vector_add", 0, 0.0)]


def test_baseline_writes_versioned_data_that_run_scores_with(suite, tmp_path, probed_home):
    baselines = tmp_path / "baselines.json"
    made = solbench("baseline", suite, "-o", baselines, "--no-compile", "--work", tmp_path / "w", "--limit", "1",
                    *FAST, env=probed_home)
    assert made.returncode == 0, made.stderr
    data = json.loads(baselines.read_text())
    assert data["version"] == 1 and "local CPU" in data["hardware_description"]
    assert {(b["definition"], b["hardware"], b["source"]) for b in data["baselines"]} == \
        {("vector_add", "local", "reference (eager)")}
    assert len(data["baselines"]) == 2 and all(b["latency_ms"] > 0 for b in data["baselines"])

    scored = solbench("run", suite, "-o", tmp_path / "r", "--baselines", baselines, "--name", "add", *FAST, env=probed_home)
    assert scored.returncode == 0, scored.stderr
    [trace] = [json.loads(line) for line in
               (tmp_path / "r" / "traces" / "L1" / "vector_add" / "reference.jsonl").read_text().splitlines()][:1]
    sol = trace["evaluation"]["solbench"]["sol"]
    assert sol["baseline_source"] == "reference (eager)" and sol["score"] is not None


@pytest.mark.slow
def test_baseline_includes_the_reference_under_torch_compile(suite, tmp_path, probed_home):
    baselines = tmp_path / "b.json"
    made = solbench("baseline", suite, "-o", baselines, "--work", tmp_path / "w", "--name", "mul", *FAST, env=probed_home)
    assert made.returncode == 0, made.stderr
    assert "L2/vector_mul/reference-compiled · 2 PASSED" in made.stderr
    sources = {b["source"] for b in json.loads(baselines.read_text())["baselines"]}
    assert sources <= {"reference (eager)", "reference (torch.compile)"} and sources


def test_bad_input_is_one_line_and_exit_2(suite, tmp_path):
    assert solbench("run", tmp_path / "missing").returncode == 2
    nothing = solbench("run", suite, "--category", "Quant", "-o", tmp_path / "x")
    assert nothing.returncode == 2 and "no problems match" in nothing.stderr
    bad_baselines = tmp_path / "b.json"
    bad_baselines.write_text("{}")
    broken = solbench("run", suite, "--baselines", bad_baselines, "-o", tmp_path / "x")
    assert broken.returncode == 2 and "b.json" in broken.stderr and broken.stderr.count("\n") == 1


def test_suite_stats_counts_every_dimension(suite):
    result = solbench("suite", "stats", suite, "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["problems"] == 2 and stats["workloads"] == 4 and stats["models"] == 2
    assert stats["backward_share"] == 0.5
    assert stats["counts"]["set"] == {"L1": 1, "L2": 1}
    assert stats["counts"]["op_type"] == {"elementwise": 1, "multiply": 1}
    assert stats["counts"]["dtype"] == {"float32": 2}
    assert stats["set_by_domain"] == {"L1": {"language": 1}, "L2": {"vision": 1}}
    table = solbench("suite", "stats", suite)
    assert "2 problems · 4 workloads · 2 models · 50% backward" in table.stdout
