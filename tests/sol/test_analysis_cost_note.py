"""An analysis says what it cost: the ATen calls a reference makes, and `solbench sol` names them when slow."""

from __future__ import annotations

from conftest import VECTOR_ADD, vector_workloads, write_problem
from solbench.cli.sol_command import slow_analysis_line
from solbench.hardware import lookup
from solbench.sol import analyze_problem
from solbench.spec import load_problem

LOOPING = {
    **VECTOR_ADD,
    "reference": "import torch\n\ndef run(x, y):\n    z = x\n    for _ in range(40):\n"
    "        z = z + y\n    return z\n",
}


def test_each_workload_counts_the_aten_calls_its_reference_makes(tmp_path):
    straight = write_problem(tmp_path / "straight", VECTOR_ADD, vector_workloads(64))
    looping = write_problem(tmp_path / "looping", LOOPING, vector_workloads(64))
    [one] = analyze_problem(load_problem(straight), lookup("H100_SXM"), precision="strict")
    [many] = analyze_problem(load_problem(looping), lookup("H100_SXM"), precision="strict")
    assert 1 <= one.coverage.aten_calls < 5
    assert many.coverage.aten_calls >= 40


def test_the_slow_analysis_note_names_the_time_and_the_most_calls(tmp_path):
    looping = write_problem(tmp_path / "looping", LOOPING, vector_workloads(64, 128))
    results = analyze_problem(load_problem(looping), lookup("H100_SXM"), precision="strict")
    line = slow_analysis_line(results, 12.34)
    most = max(r.coverage.aten_calls for r in results)
    assert "12.3 s for 2 workload(s)" in line and f"up to {most:,} ATen calls" in line
