"""Precision downgrade: a loose tolerance lets bf16 work pass as fp32; the float64 golden check does not."""

import pytest

from conftest import make_solution, write_problem
from solbench.evaluation import evaluate
from solbench.spec import load_problem
from solbench.spec.trace import EvaluationStatus as S

pytestmark = pytest.mark.slow  # sandbox evaluations

MATMUL = {
    "name": "matmul_fp32",
    "axes": {"M": {"type": "var"}, "K": {"type": "const", "value": 256}, "N": {"type": "const", "value": 128}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "float32"}, "B": {"shape": ["K", "N"], "dtype": "float32"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "float32"}},
    "reference": "import torch\ndef run(A, B):\n    return A @ B\n",
}
LOOSE = {"max_atol": 1.0, "max_rtol": 0.1}


def test_bf16_compute_on_an_fp32_problem_is_caught(tmp_path, fast_config):
    workloads = [
        {
            "uuid": "m64",
            "axes": {"M": 64},
            "tolerance": LOOSE,
            "inputs": {"A": {"type": "random"}, "B": {"type": "random"}},
        }
    ]
    problem = load_problem(write_problem(tmp_path / "mm", MATMUL, workloads))
    downgrade = make_solution(
        "import torch\ndef run(A, B):\n    return (A.bfloat16() @ B.bfloat16()).float()\n", definition="matmul_fp32"
    )
    [trace] = evaluate(problem, downgrade, fast_config)
    assert trace.evaluation.status is S.INCORRECT_NUMERICAL
    assert trace.evaluation.solbench.failed_rule == "precision_downgrade"
    honest = make_solution(
        "import torch\ndef run(A, B):\n    return torch.einsum('mk,kn->mn', A, B)\n", definition="matmul_fp32"
    )
    [trace] = evaluate(problem, honest, fast_config)
    assert trace.evaluation.status is S.PASSED
