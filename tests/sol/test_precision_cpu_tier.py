"""A published workload too large to check takes the precision its tolerance admits on the problem's CPU tier."""

import json

import pytest

from conftest import write_problem
from solbench.hardware import lookup
from solbench.sol import analyze_problem
from solbench.spec import load_problem
from solbench.spec.inputs import inputs_for_analysis

LOOSE = {"max_atol": 0.5, "max_rtol": 0.05}
"""Met by bf16 products over K=256."""
TIGHT = {"max_atol": 1e-4, "max_rtol": 1e-4}
"""Met only by fp32-accurate products."""
CPU_TIER_M = 16
COUNTING_MATMUL = {
    "name": "matmul_fp32",
    "axes": {"M": {"type": "var"}, "K": {"type": "const", "value": 256}, "N": {"type": "const", "value": 256}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "float32"}, "B": {"shape": ["K", "N"], "dtype": "float32"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "float32"}},
}
REFERENCE = """import torch
def run(A, B):
    if A.shape[0] == {m}:  # the CPU-tier workload: the analysis records only the published ones
        with open({runs!r}, "a") as runs:
            runs.write("x")
    return A @ B
"""


def _workload(uuid: str, m: int, tolerance: dict) -> dict:
    inputs = {"A": {"type": "random"}, "B": {"type": "random"}}
    return {"uuid": uuid, "axes": {"M": m}, "tolerance": tolerance, "inputs": inputs}


@pytest.fixture
def too_large_to_check(tmp_path, monkeypatch):
    """(problem folder, file counting the reference's runs on the CPU-tier workload): two published workloads above
    the check budget, one loose and one tight, and a CPU tier of one workload whose own tolerance is the tight one,
    so that a check under the CPU-tier workload's tolerance would make both fp32."""
    import solbench.sol.problem_precision as problem_precision

    monkeypatch.setattr(problem_precision, "CHECK_BUDGET_FLOPS", 1e6)  # a published workload's 5.4e8 is above
    runs = tmp_path / "runs"
    definition = dict(COUNTING_MATMUL, reference=REFERENCE.format(m=CPU_TIER_M, runs=str(runs)))
    folder = write_problem(
        tmp_path / "mm", definition, [_workload("loose", 4096, LOOSE), _workload("tight", 4096, TIGHT)]
    )
    (folder / "workload.cpu.jsonl").write_text(json.dumps(_workload("cpu16", CPU_TIER_M, TIGHT)) + "\n")
    return folder, runs


def _records(folder):
    results = analyze_problem(
        load_problem(folder, "gpu"), lookup("B200_1500MHz"), make_inputs=inputs_for_analysis, precision="tolerance"
    )
    return {r.workload.uuid: r.precision for r in results}


def test_each_workload_is_checked_on_the_cpu_tier_under_its_own_tolerance(too_large_to_check):
    folder, _ = too_large_to_check
    records = _records(folder)
    assert (records["loose"].matrix_precision, records["tight"].matrix_precision) == ("bf16", "fp32")
    for record in records.values():
        assert record.basis.startswith(
            "tolerance: inferred from CPU-tier workload cpu16 (M=16) checked under this workload's tolerance "
            "(relative error by precision: bf16"
        )
    assert records["loose"].admitted_error and records["loose"].admitted_error[0] < 0.05


def test_one_check_serves_every_tolerance_and_is_cached(too_large_to_check):
    """One real run and three emulated ones (bf16 decides the loose tolerance; the tight one tries fp16 and TF32
    too) for both tolerances together; a second analysis reads both from the cache and runs nothing."""
    folder, runs = too_large_to_check
    first = _records(folder)
    assert runs.read_text() == "xxxx"
    assert _records(folder) == first
    assert runs.read_text() == "xxxx"


def test_without_a_cpu_tier_the_precision_stays_not_determined(too_large_to_check):
    folder, runs = too_large_to_check
    (folder / "workload.cpu.jsonl").unlink()
    for record in _records(folder).values():
        assert record.matrix_precision == "fp32"
        assert record.basis.startswith("tolerance: not determined (too large to check on this CPU and no smaller")
    assert not runs.exists()


def test_a_cpu_tier_check_that_cannot_run_says_why(too_large_to_check, monkeypatch):
    import solbench.sol.problem_precision as problem_precision

    monkeypatch.setattr(problem_precision, "CHECK_BUDGET_BYTES", 1024)  # the CPU-tier inputs hold 278 KB
    folder, _ = too_large_to_check
    for record in _records(folder).values():
        assert record.matrix_precision == "fp32"
        assert "not determined" in record.basis
        assert (
            "its CPU-tier workload cpu16 could not be checked: its inputs hold 0.266 MiB, above the 0.000977 MiB"
            in record.basis
        )


def test_no_emulated_run_starts_after_the_deadline():
    import torch

    from solbench.sol.precision import check_admissible_under
    from solbench.spec.workload import Tolerance

    a, b = torch.randn(4, 8), torch.randn(8, 4)
    [(precision, tried)] = check_admissible_under(lambda v: v[0] @ v[1], [a, b], a @ b, [Tolerance()], deadline=0.0)
    assert (precision, tried) == (None, {})
