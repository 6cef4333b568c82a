"""`solbench baseline`: which candidate becomes T_b, merging into an existing file, reusing a run folder."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import VECTOR_ADD, vector_workloads, write_problem
from solbench.runner.baseline import fastest_correct, merge
from solbench.runner.jobs import COMPILED_REFERENCE, REFERENCE
from solbench.scoring import Baseline
from solbench.spec.trace import Trace

FAST = ["--rounds", "1", "--budget", "0.01", "--no-compile", "--limit", "1"]


def _trace(workload: str, status: str, latency_ms: float) -> Trace:
    passed = status == "PASSED"
    evaluation = {
        "status": status,
        "environment": {"hardware": "cpu"},
        "timestamp": "2026-01-01T00:00:00Z",
        "correctness": {} if status in ("PASSED", "INCORRECT_NUMERICAL") else None,
        "performance": {"latency_ms": latency_ms} if passed else None,
    }
    return Trace.model_validate(
        {
            "definition": "add",
            "solution": "s",
            "evaluation": evaluation,
            "workload": {
                "uuid": workload,
                "axes": {"N": 8},
                "inputs": {"x": {"type": "random"}, "y": {"type": "random"}},
            },
        }
    )


def _store(out: Path, solution: str, traces: list[Trace]) -> None:
    path = out / "traces" / "L1" / "add" / f"{solution}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(t.model_dump_json() + "\n" for t in traces))


def test_the_fastest_candidate_that_passed_becomes_the_baseline(tmp_path):
    _store(
        tmp_path,
        REFERENCE,
        [_trace("w1", "PASSED", 2.0), _trace("w2", "PASSED", 3.0), _trace("w3", "RUNTIME_ERROR", 0)],
    )
    _store(
        tmp_path,
        COMPILED_REFERENCE,
        [_trace("w1", "PASSED", 1.0), _trace("w2", "PASSED", 4.0), _trace("w3", "TIMEOUT", 0)],
    )
    _store(tmp_path, "tuned", [_trace("w1", "INCORRECT_NUMERICAL", 0), _trace("w2", "PASSED", 3.5)])
    _store(tmp_path, "not-a-candidate", [_trace("w1", "PASSED", 0.1), _trace("w2", "PASSED", 0.1)])

    measured, notes = fastest_correct(tmp_path, "local", [REFERENCE, COMPILED_REFERENCE, "tuned"])
    assert [(b.workload, b.latency_ms, b.source, b.hardware) for b in measured] == [
        ("w1", 1.0, "reference (torch.compile)", "local"),  # faster than eager; the wrong `tuned` does not count
        ("w2", 3.0, "reference (eager)", "local"),  # the slower candidates lose
    ]
    assert notes == ["add workload w3: no candidate passed, no baseline"]


def test_merge_replaces_what_was_measured_again_and_keeps_the_rest():
    old = [
        Baseline(definition="add", workload="w1", hardware="LOCAL", latency_ms=9.0),
        Baseline(definition="add", workload="w1", hardware="H200", latency_ms=0.1),
        Baseline(definition="other", workload="w9", hardware="local", latency_ms=5.0),
    ]
    new = [Baseline(definition="add", workload="w1", hardware="local", latency_ms=1.0, source="reference (eager)")]
    assert [(b.definition, b.hardware, b.latency_ms) for b in merge(old, new)] == [
        ("add", "H200", 0.1),
        ("add", "local", 1.0),
        ("other", "local", 5.0),
    ]


def _solbench(*args, env):
    return subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )


@pytest.mark.slow
def test_baseline_merges_into_an_existing_file_and_resumes_from_its_work_folder(tmp_path, probed_home):
    suite = tmp_path / "suite"
    write_problem(suite / "L1" / "vector_add", {**VECTOR_ADD, "tags": ["set:L1"]}, vector_workloads(1000, 3000))
    output, work = tmp_path / "baselines.json", tmp_path / "work"
    kept = [
        {"definition": "elsewhere", "workload": "w", "hardware": "local", "latency_ms": 7.0, "source": "kept"},
        {"definition": "vector_add", "workload": "n1000", "hardware": "H200", "latency_ms": 0.5, "source": "gpu"},
        {"definition": "vector_add", "workload": "n1000", "hardware": "local", "latency_ms": 1e6, "source": "old"},
    ]
    output.write_text(json.dumps({"version": 1, "baselines": kept}))

    first = _solbench("baseline", suite, "-o", output, "--work", work, *FAST, env=probed_home)
    assert first.returncode == 0, first.stderr
    entries = {(b["definition"], b["workload"], b["hardware"]): b for b in json.loads(output.read_text())["baselines"]}
    assert set(entries) == {
        ("elsewhere", "w", "local"),
        ("vector_add", "n1000", "H200"),
        ("vector_add", "n1000", "local"),
        ("vector_add", "n3000", "local"),
    }
    assert entries["elsewhere", "w", "local"]["source"] == "kept"
    assert entries["vector_add", "n1000", "H200"]["latency_ms"] == 0.5
    assert entries["vector_add", "n1000", "local"]["source"] == "reference (eager)"  # the stale one is replaced
    assert "holds 4" in first.stderr
    assert (work / "traces" / "L1" / "vector_add" / "reference.jsonl").is_file()

    # The same --work folder again: nothing is measured twice, and the baselines come from its stored traces.
    output.unlink()
    again = _solbench("baseline", suite, "-o", output, "--work", work, *FAST, env=probed_home)
    assert again.returncode == 0, again.stderr
    assert "L1/vector_add/reference · already done" in again.stderr, again.stderr
    latencies = {b["workload"]: b["latency_ms"] for b in json.loads(output.read_text())["baselines"]}
    assert latencies == {w: entries["vector_add", w, "local"]["latency_ms"] for w in ("n1000", "n3000")}
