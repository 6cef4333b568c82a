"""T_SOL stays a lower bound for what the evaluation accepted: scoring charges fp32 matrix work at the precision
the trace's downgrade rule admitted when that is lower than the one the analysis charges."""

import pytest

from conftest import write_problem
from solbench.hardware import lookup
from solbench.scoring.traces import attach_sol
from solbench.spec.problem import load_problem
from solbench.spec.trace import (
    Correctness,
    Environment,
    Evaluation,
    EvaluationDetails,
    EvaluationStatus,
    Performance,
    PrecisionRecord,
    Trace,
)

WIDE_MATMUL = {
    "name": "matmul_fp32",
    "axes": {"M": {"type": "var"}, "K": {"type": "const", "value": 2048}, "N": {"type": "const", "value": 2048}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "float32"}, "B": {"shape": ["K", "N"], "dtype": "float32"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "float32"}},
    "reference": "import torch\ndef run(A, B):\n    return A @ B\n",
}


def _trace(workload, precision: PrecisionRecord | None) -> Trace:
    evaluation = Evaluation(
        status=EvaluationStatus.PASSED,
        environment=Environment(hardware="test"),
        timestamp="now",
        correctness=Correctness(),
        performance=Performance(latency_ms=1.0, reference_latency_ms=2.0),
        solbench=EvaluationDetails(harness_version="test", device="cpu", device_name="test", precision=precision),
    )
    return Trace(definition="matmul_fp32", solution="bf16_kernel", evaluation=evaluation, workload=workload)


def test_a_trace_admitted_at_bf16_is_scored_against_the_bf16_t_sol(tmp_path):
    problem = load_problem(
        write_problem(
            tmp_path / "mm",
            WIDE_MATMUL,
            [{"uuid": "big", "axes": {"M": 16384}, "inputs": {"A": {"type": "random"}, "B": {"type": "random"}}}],
        )
    )
    [workload] = problem.workloads
    hardware = lookup("B200_1500MHz")
    admitted = PrecisionRecord(policy="tolerance", matrix_precision="bf16", basis="checked on this workload")
    [strict] = attach_sol([_trace(workload, None)], problem, hardware, precision="strict")
    [lowered] = attach_sol([_trace(workload, admitted)], problem, hardware, precision="strict")
    ratio = hardware.matrix_rate("bfloat16")[0] / hardware.matrix_rate("float32")[0]
    sol = lambda trace: trace.evaluation.solbench.sol  # noqa: E731 - a one-line helper next to its use
    assert sol(strict).precision.matrix_precision == "fp32" and sol(lowered).precision.matrix_precision == "bf16"
    assert sol(strict).t_sol_ms / sol(lowered).t_sol_ms == pytest.approx(ratio, rel=1e-9)
