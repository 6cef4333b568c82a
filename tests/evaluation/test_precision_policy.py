"""The precision policy on the correctness side: one admissible precision for the downgrade rule, recorded."""

from dataclasses import replace

import pytest

from conftest import make_solution, write_problem
from solbench.evaluation import EvaluationConfig, HarnessOptionError, evaluate
from solbench.spec import load_problem
from solbench.spec.trace import EvaluationStatus as S

MATMUL = {
    "name": "matmul_fp32",
    "axes": {"M": {"type": "var"}, "K": {"type": "const", "value": 256}, "N": {"type": "const", "value": 128}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "float32"}, "B": {"shape": ["K", "N"], "dtype": "float32"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "float32"}},
    "reference": "import torch\ndef run(A, B):\n    return A @ B\n",
    "tags": ["origin:sol-execbench"],
}
BF16 = "import torch\ndef run(A, B):\n    return (A.bfloat16() @ B.bfloat16()).float()\n"
FP8 = "import torch\ndef run(A, B):\n    lo = torch.float8_e4m3fn\n    return A.to(lo).float() @ B.to(lo).float()\n"


def problem_with(tmp_path, tolerance):
    workloads = [
        {
            "uuid": "m64",
            "axes": {"M": 64},
            "tolerance": tolerance,
            "inputs": {"A": {"type": "random"}, "B": {"type": "random"}},
        }
    ]
    return load_problem(write_problem(tmp_path / "mm", MATMUL, workloads))


def test_unknown_policy_is_an_option_error():
    with pytest.raises(HarnessOptionError, match="precision"):
        EvaluationConfig(precision="loose")


@pytest.mark.slow
def test_bf16_passes_under_tolerance_and_fails_under_strict(tmp_path, fast_config):
    problem = problem_with(tmp_path, {"max_atol": 1.0, "max_rtol": 0.1})
    solution = make_solution(BF16, definition="matmul_fp32")
    config = replace(fast_config, time_solution=False)
    [tolerant] = evaluate(problem, solution, config)  # auto: the problem is tagged origin:sol-execbench
    assert tolerant.evaluation.status is S.PASSED
    record = tolerant.evaluation.solbench.precision
    assert (record.policy, record.matrix_precision) == ("tolerance", "bf16") and record.admitted_error
    [strict] = evaluate(problem, solution, replace(config, precision="strict"))
    assert strict.evaluation.status is S.INCORRECT_NUMERICAL
    assert strict.evaluation.solbench.failed_rule == "precision_downgrade"
    assert strict.evaluation.solbench.precision.policy == "strict"
    very_loose = problem_with(tmp_path / "loose", {"max_atol": 10.0, "max_rtol": 0.5})
    [fp8] = evaluate(very_loose, make_solution(FP8, definition="matmul_fp32"), config)  # lower than admissible
    assert fp8.evaluation.status is S.INCORRECT_NUMERICAL
    assert fp8.evaluation.solbench.failed_rule == "precision_downgrade"


@pytest.mark.slow
def test_a_tight_tolerance_admits_only_fp32(tmp_path, fast_config):
    problem = problem_with(tmp_path, {"max_atol": 1e-3, "max_rtol": 1e-3})
    config = replace(fast_config, time_solution=False)
    [trace] = evaluate(problem, make_solution(BF16, definition="matmul_fp32"), config)
    assert trace.evaluation.status is S.INCORRECT_NUMERICAL
    assert trace.evaluation.solbench.precision.matrix_precision == "fp32"
    honest = make_solution(
        "import torch\ndef run(A, B):\n    return torch.einsum('mk,kn->mn', A, B)\n", definition="matmul_fp32"
    )
    [trace] = evaluate(problem, honest, config)
    assert trace.evaluation.status is S.PASSED and trace.evaluation.solbench.precision.policy == "tolerance"
