"""`solbench baseline --agent CMD --rounds N`: T_b from the best candidate of an optimisation loop, beside the
references, fastest correct per workload."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import VECTOR_ADD, vector_workloads, write_problem
from optimize.loop_fixtures import FAST_ADD, agent_command

SLOW_REFERENCE = dict(
    VECTOR_ADD,
    reference="import torch\n\ndef run(x, y):\n    z = x + y\n" + "    z = (x + y) * 1.0\n" * 30 + "    return z\n",
)


def test_fastest_keeps_the_lowest_latency_per_workload_and_hardware():
    from solbench.runner.baseline import fastest
    from solbench.scoring import Baseline

    eager = [
        Baseline(definition="add", workload="w1", hardware="local", latency_ms=2.0, source="eager"),
        Baseline(definition="add", workload="w2", hardware="local", latency_ms=1.0, source="eager"),
    ]
    searched = [Baseline(definition="add", workload="w1", hardware="LOCAL", latency_ms=0.5, source="optimize")]
    assert [(b.workload, b.source) for b in fastest(eager, searched)] == [("w1", "optimize"), ("w2", "eager")]


@pytest.mark.slow
def test_baseline_with_an_agent_takes_its_faster_candidate(tmp_path, probed_home):
    problem = write_problem(tmp_path / "add", SLOW_REFERENCE, vector_workloads(1000, 4000))
    output = tmp_path / "baselines.json"
    agent = agent_command(tmp_path, f"solution('fast_add', {FAST_ADD!r}, technique='one add')\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "solbench",
            "baseline",
            str(problem),
            "-o",
            str(output),
            "--no-compile",
            "--work",
            str(tmp_path / "work"),
            "--budget",
            "0.05",
            "--agent",
            agent,
            "--rounds",
            "1",
            "--correctness-rounds",
            "1",
            "--device",
            "cpu",
        ],
        env={**os.environ, **probed_home},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    entries = json.loads(output.read_text())["baselines"]
    assert sorted(e["workload"] for e in entries) == ["n1000", "n4000"]
    assert {e["source"] for e in entries} == {f"optimize ({agent}) candidate 1-1"}
    journal = tmp_path / "work" / "optimize"
    assert len(list(journal.glob("*/vector_add/journal.jsonl"))) == 1
