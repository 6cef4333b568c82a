"""`solbench hw`, `solbench sol`, `solbench score` and `solbench eval --hardware`, through real processes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import solution_dict

ROOT = Path(__file__).resolve().parents[2]


def solbench(*args, env=None, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def test_hw_list_and_show():
    listing = solbench("hw", "list", "--json")
    assert listing.returncode == 0 and "H200" in [d["id"] for d in json.loads(listing.stdout)]
    shown = solbench("hw", "show", "b200_locked", "--json")
    spec = json.loads(shown.stdout)
    assert spec["id"] == "B200_1500MHz" and spec["sources"]["tensor.bfloat16"]
    unknown = solbench("hw", "show", "TPUv9")
    assert unknown.returncode == 2 and "unknown hardware 'TPUv9'" in unknown.stderr


@pytest.mark.slow
def test_sol_json_contract_and_explain():
    result = solbench("sol", ROOT / "examples" / "rmsnorm", "--hardware", "H200", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert len(rows) == 4
    for row in rows:
        assert {"workload", "flops", "bytes", "t_sol_ms", "bound"} <= set(row)
        assert set(row["workload"]) == {"uuid", "axes"} and row["bound"] == "memory"
    # hidden 2048 fp32: read x and weight, write y
    b512 = rows[3]
    assert b512["bytes"] == 512 * 2048 * 4 * 2 + 2048 * 4
    assert b512["t_sol_ms"] == pytest.approx(b512["bytes"] / 4.8e12 * 1e3)
    explained = solbench("sol", ROOT / "examples" / "rmsnorm", "-H", "h200", "--explain", env={"COLUMNS": "250"})
    assert explained.returncode == 0 and "rsqrt" in explained.stdout and "per element" in explained.stdout


def test_a_malformed_probe_is_one_line_naming_the_file_and_is_kept(isolated_cache):
    probe_file = isolated_cache / "hardware" / "local.json"
    probe_file.parent.mkdir(parents=True)
    probe_file.write_text("{not json")
    result = solbench("sol", ROOT / "examples" / "rmsnorm", "--hardware", "local")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"{probe_file}: not a probe result" in result.stderr and probe_file.read_text() == "{not json"


@pytest.mark.slow
def test_eval_with_hardware_adds_t_sol_and_score_then_score_reads_them(vector_add_problem, tmp_path, probed_home):
    solution = tmp_path / "solution.json"
    solution.write_text(json.dumps(solution_dict("import torch\ndef run(x, y):\n    return x + y\n")))
    traces_file = tmp_path / "traces.jsonl"
    result = solbench(
        "eval",
        vector_add_problem,
        "--solution",
        solution,
        "--json",
        "--budget",
        "0.1",
        "--hardware",
        "local",
        "-o",
        traces_file,
        env=probed_home,
    )
    assert result.returncode == 0, result.stderr
    for trace in json.loads(result.stdout):
        sol = trace["evaluation"]["solbench"]["sol"]
        assert sol["hardware"] == "local" and sol["bound"] == "memory" and sol["coverage_full"]
        assert sol["t_sol_ms"] == pytest.approx(trace["workload"]["axes"]["N"] * 12 / 20e9 * 1e3)
        assert 0 <= sol["score"] <= 1 and sol["baseline_source"] == "reference timed in the same run"
    scored = solbench("score", traces_file, "--hardware", "local", "--json", env=probed_home)
    assert scored.returncode == 0, scored.stderr
    report = json.loads(scored.stdout)
    assert [p["definition"] for p in report["problems"]] == ["vector_add"]
    assert [(s["set"], s["score"]) for s in report["sets"]] == [("all", pytest.approx(report["problems"][0]["score"]))]
    assert report["unscored_policy"] == "exclude" and report["problems"][0]["latency_ms"] > 0


@pytest.mark.slow
def test_score_analyses_problems_for_traces_without_t_sol(vector_add_problem, tmp_path):
    solution = tmp_path / "solution.json"
    solution.write_text(json.dumps(solution_dict("import torch\ndef run(x, y):\n    return x + y\n")))
    traces_file = tmp_path / "traces.jsonl"
    assert (
        solbench("eval", vector_add_problem, "--solution", solution, "--budget", "0.05", "-o", traces_file).returncode
        == 0
    )
    baselines = tmp_path / "baselines.json"
    baselines.write_text(
        json.dumps(
            {
                "version": 1,
                "baselines": [
                    {
                        "definition": "vector_add",
                        "workload": "n1000",
                        "hardware": "H200",
                        "latency_ms": 0.01,
                        "source": "test",
                    }
                ],
            }
        )
    )
    scored = solbench(
        "score", traces_file, "-H", "H200", "--baselines", baselines, "--problems", vector_add_problem.parent, "--json"
    )
    assert scored.returncode == 0, scored.stderr
    workloads = {w["workload"]: w for w in json.loads(scored.stdout)["workloads"]}
    assert workloads["n1000"]["baseline_source"] == "test" and workloads["n1000"]["t_sol_ms"] > 0
    assert workloads["n4099"]["baseline_source"] == "reference timed in the same run"
    assert (
        scored.stdout
        and "per set" in solbench("score", traces_file, "-H", "H200", "--problems", vector_add_problem.parent).stdout
    )


@pytest.mark.slow
def test_hw_probe_measures_and_stores(tmp_path):
    result = solbench("hw", "probe", env={"SOLBENCH_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert "GB/s" in result.stdout and (tmp_path / "hardware" / "local.json").exists()
    assert solbench("hw", "show", "local", env={"SOLBENCH_CACHE_DIR": str(tmp_path)}).returncode == 0


@pytest.mark.slow
def test_hardware_local_without_a_stored_probe_probes_once_and_says_so(isolated_cache):
    first = solbench("sol", ROOT / "examples" / "rmsnorm", "--hardware", "local", "--json")
    assert first.returncode == 0, first.stderr
    assert "no probe of this CPU is stored" in first.stderr and "probed this CPU in" in first.stderr
    assert (isolated_cache / "hardware" / "local.json").exists() and json.loads(first.stdout)
    again = solbench("sol", ROOT / "examples" / "rmsnorm", "--hardware", "local", "--json")
    # probed once: the second run reads the stored probe (a slow-analysis note may appear on a loaded machine)
    assert again.returncode == 0 and "probe" not in again.stderr


def _problem_set(tmp_path):
    """A set of two problems: rmsnorm, and a copy whose definition names an input shape axis it does not declare."""
    import shutil

    root = tmp_path / "set"
    shutil.copytree(ROOT / "examples" / "rmsnorm", root / "L1" / "good")
    broken = shutil.copytree(ROOT / "examples" / "rmsnorm", root / "L1" / "broken")
    definition = json.loads((broken / "definition.json").read_text())
    first = next(iter(definition["inputs"]))
    definition["inputs"][first]["shape"] = ["no_such_axis"]
    (broken / "definition.json").write_text(json.dumps(definition))
    return root


def test_sol_over_a_set_analyses_each_problem_in_one_process_and_keeps_going_past_a_failure(tmp_path):
    root = _problem_set(tmp_path)
    out = tmp_path / "sol.jsonl"
    result = solbench("sol", root, "-H", "H200", "-o", out, env={"COLUMNS": "250"})
    assert result.returncode == 1, result.stderr
    assert "[1/2] L1/broken" in result.stdout and "[2/2] L1/good" in result.stdout
    assert "1 of 2 problems analysed on H200 (4 workloads)" in result.stdout
    assert "failed: L1/broken:" in result.stdout and "no_such_axis" in result.stdout
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["folder"] for line in lines] == ["L1/broken", "L1/good"]
    assert "definition.json" in lines[0]["error"] and not lines[0].get("workloads")
    assert len(lines[1]["workloads"]) == 4 and lines[1]["problem"] == "rmsnorm_fp32_h2048"
    as_json = solbench("sol", root, "-H", "H200", "--json")
    assert [json.loads(line)["folder"] for line in as_json.stdout.splitlines()] == ["L1/broken", "L1/good"]


def test_sol_over_a_set_refuses_explain_and_an_empty_folder_in_one_line(tmp_path):
    explained = solbench("sol", _problem_set(tmp_path), "-H", "H200", "--explain")
    assert explained.returncode == 2 and explained.stderr.count("\n") == 1 and "--explain" in explained.stderr
    (tmp_path / "empty").mkdir()
    empty = solbench("sol", tmp_path / "empty", "-H", "H200")
    assert empty.returncode == 2 and "no problem folders" in empty.stderr, empty.stderr
    single = solbench("sol", ROOT / "examples" / "rmsnorm", "-H", "H200", "-o", tmp_path / "x.jsonl")
    assert single.returncode == 2 and "--output is for a set" in single.stderr
    unwritable = solbench("sol", _problem_set(tmp_path / "again"), "-H", "H200", "-o", tmp_path / "no" / "x.jsonl")
    assert unwritable.returncode == 2 and unwritable.stderr.count("\n") == 1, unwritable.stderr
    assert f"{tmp_path / 'no' / 'x.jsonl'}: cannot write" in unwritable.stderr
