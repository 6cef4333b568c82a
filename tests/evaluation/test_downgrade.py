"""A solution too far from the float64 golden result: a precision downgrade only where a lower precision explains the
error, a wrong result otherwise (variance instead of the mean square passes a loose tolerance, but no precision
explains it)."""

from __future__ import annotations

import pytest
import torch

from conftest import make_solution, write_problem
from solbench.evaluation import evaluate
from solbench.evaluation.correctness import ExpectedOutput, Verdict, check_outputs
from solbench.evaluation.downgrade import alignment_cut, diagnose, round_to_precision
from solbench.spec import load_problem
from solbench.spec.trace import EvaluationStatus
from solbench.spec.workload import Tolerance

LOOSE = Tolerance(max_atol=1e-2, max_rtol=1e-2)


def rmsnorm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rmsnorm_with_variance(x, w, eps=1e-6):
    return x * torch.rsqrt(x.var(-1, keepdim=True, unbiased=False) + eps) * w


CANDIDATES = {
    "variance": (rmsnorm_with_variance, "wrong_result"),
    "wrong eps": (lambda x, w: rmsnorm(x, w, eps=1e-2), "wrong_result"),
    "bf16": (lambda x, w: rmsnorm(x.bfloat16(), w.bfloat16()).float(), "precision_downgrade"),
    "fp16": (lambda x, w: rmsnorm(x.half(), w.half()).float(), "precision_downgrade"),
}


def _lower_run(function, *inputs):
    """What the evaluator's reference gives: float64 outputs on inputs rounded to the precision."""
    return lambda precision: [function(*(round_to_precision(v, precision) for v in inputs))]


@pytest.mark.parametrize("name", list(CANDIDATES))
@pytest.mark.parametrize("rows", [1, 7, 64])
def test_only_an_error_a_lower_precision_explains_is_called_a_downgrade(name, rows):
    generator = torch.Generator().manual_seed(rows)
    x, w = torch.randn(rows, 2048, generator=generator), torch.randn(2048, generator=generator)
    candidate, rule = CANDIDATES[name]
    golden, reference = rmsnorm(x.double(), w.double()), rmsnorm(x, w)
    spec = ExpectedOutput("output", (rows, 2048), "float32", "cpu")
    verdict = check_outputs(
        [candidate(x, w)],
        ["cpu"],
        [reference],
        [spec],
        LOOSE,
        Verdict(),
        0,
        [golden],
        lower_run=_lower_run(rmsnorm, x, w),
    )
    assert verdict.status is EvaluationStatus.INCORRECT_NUMERICAL  # both are failures; the rule names the cause
    assert verdict.failure.rule == rule
    if rule == "wrong_result":
        assert "not a precision downgrade" in verdict.failure.detail and "check the algorithm" in verdict.failure.detail
    else:
        assert "the error follows the reference's in" in verdict.failure.detail


@pytest.mark.parametrize(
    ("candidate", "explained_by"),
    [
        (lambda a, b: (a.bfloat16() @ b.bfloat16()).float(), "bfloat16"),
        (lambda a, b: (a.half() @ b.half()).float(), "tf32"),  # the same 10-bit mantissa: tf32 is tried first
        (lambda a, b: round_to_precision(a, "tf32").float() @ round_to_precision(b, "tf32").float(), "tf32"),
        (lambda a, b: a.to(torch.float8_e4m3fn).float() @ b.to(torch.float8_e4m3fn).float(), "float8_e4m3fn"),
    ],
    ids=["bf16", "fp16", "tf32 (fp32 accumulation, as on a GPU)", "fp8"],
)
def test_matrix_products_in_a_lower_precision_are_explained_by_it(candidate, explained_by):
    generator = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 256, generator=generator), torch.randn(256, 32, generator=generator)
    golden = a.double() @ b.double()
    diagnosis = diagnose(candidate(a, b), golden, ["tf32", "float16", "bfloat16", "float8_e4m3fn"], _matmul(a, b))
    assert diagnosis.precision == explained_by and diagnosis.alignment[explained_by] > 0.9


def test_a_systematic_error_aligns_with_no_precision_however_small():
    generator = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 256, generator=generator), torch.randn(256, 32, generator=generator)
    golden = a.double() @ b.double()
    shifted = (golden * (1 + 1e-4) + 1e-3).float()  # a scale and an offset: smaller than any downgrade's error
    diagnosis = diagnose(shifted, golden, ["tf32", "bfloat16"], _matmul(a, b))
    assert diagnosis.precision is None and diagnosis.rule == "wrong_result"
    assert all(abs(cosine) < 0.3 for cosine in diagnosis.alignment.values())


def test_a_tiny_output_needs_a_closer_alignment():
    assert alignment_cut(2048 * 7) == 0.3 and alignment_cut(16) == 0.75 and alignment_cut(1) == 0.9


def test_without_lower_runs_the_rule_stays_precision_downgrade():
    x, w = torch.randn(7, 2048), torch.randn(2048)
    spec = ExpectedOutput("output", (7, 2048), "float32", "cpu")
    golden = rmsnorm(x.double(), w.double())
    verdict = check_outputs(
        [rmsnorm_with_variance(x, w)], ["cpu"], [rmsnorm(x, w)], [spec], LOOSE, Verdict(), 0, [golden]
    )
    assert verdict.failure.rule == "precision_downgrade"


def _matmul(a, b):
    return lambda precision: round_to_precision(a, precision) @ round_to_precision(b, precision)


RANDOM = {"x": {"type": "random"}, "w": {"type": "random"}}
RMSNORM = {
    "name": "rmsnorm_fp32",
    "axes": {"B": {"type": "var"}, "H": {"type": "const", "value": 2048}},
    "inputs": {"x": {"shape": ["B", "H"], "dtype": "float32"}, "w": {"shape": ["H"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["B", "H"], "dtype": "float32"}},
    "reference": "import torch\n\ndef run(x, w):\n"
    "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w\n",
}


@pytest.mark.slow
def test_the_evaluator_tells_a_variance_rmsnorm_from_a_bf16_one(tmp_path, fast_config):
    workloads = [{"uuid": "b7", "axes": {"B": 7}, "tolerance": {"max_atol": 1e-2, "max_rtol": 1e-2}, "inputs": RANDOM}]
    problem = load_problem(write_problem(tmp_path / "rmsnorm", RMSNORM, workloads))
    variance = (
        "import torch\n\ndef run(x, w):\n"
        "    return x * torch.rsqrt(x.var(-1, keepdim=True, unbiased=False) + 1e-6) * w\n"
    )
    bf16 = (
        "import torch\n\ndef run(x, w):\n    x, w = x.bfloat16(), w.bfloat16()\n"
        "    return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w).float()\n"
    )
    [wrong] = evaluate(problem, make_solution(variance, definition="rmsnorm_fp32"), fast_config)
    [downgraded] = evaluate(problem, make_solution(bf16, definition="rmsnorm_fp32"), fast_config)
    for trace, rule in ((wrong, "wrong_result"), (downgraded, "precision_downgrade")):
        assert trace.evaluation.status is EvaluationStatus.INCORRECT_NUMERICAL
        assert trace.evaluation.solbench.failed_rule == rule
