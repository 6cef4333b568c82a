"""Every correctness rule, on crafted outputs: each rejection names its rule and how far off it was."""

import math

import pytest
import torch

from solbench.evaluation.correctness import (
    ExpectedOutput,
    Verdict,
    check_outputs,
    measure_tolerance,
    reference_problem,
    within_tolerance,
)
from solbench.spec.trace import EvaluationStatus
from solbench.spec.workload import Tolerance

SPEC = ExpectedOutput("out", (64, 32), "float32", "cpu")


def _check(output, reference, tolerance=Tolerance(), golden=None, spec=SPEC, device="cpu"):
    return check_outputs(
        [output],
        [device],
        [reference],
        [spec],
        tolerance,
        Verdict(),
        0,
        golden=[golden] if golden is not None else None,
        keep_passed=True,
    )


@pytest.fixture
def reference():
    return torch.randn(64, 32, generator=torch.Generator().manual_seed(0))


def test_exact_output_passes_every_rule(reference):
    verdict = _check(reference.clone(), reference, golden=reference.double())
    assert verdict.status is EvaluationStatus.PASSED
    assert {c.rule for c in verdict.checks} >= {
        "shape",
        "dtype",
        "device",
        "nan",
        "inf",
        "tolerance",
        "zero_output",
        "constant_output",
        "relative_error_norm",
        "precision_downgrade",
    }


@pytest.mark.parametrize(
    "make, rule, status",
    [
        (lambda r: r[:, :16], "shape", EvaluationStatus.INCORRECT_SHAPE),
        (lambda r: r.double(), "dtype", EvaluationStatus.INCORRECT_DTYPE),
        (lambda r: r.masked_fill(torch.rand_like(r) < 0.01, float("nan")), "nan", EvaluationStatus.INCORRECT_NUMERICAL),
        (lambda r: r.masked_fill(torch.rand_like(r) < 0.01, float("inf")), "inf", EvaluationStatus.INCORRECT_NUMERICAL),
        (lambda r: r + 0.5, "tolerance", EvaluationStatus.INCORRECT_NUMERICAL),
    ],
)
def test_each_rule_rejects_with_its_name(reference, make, rule, status):
    verdict = _check(make(reference), reference)
    assert verdict.status is status
    assert verdict.failure.rule == rule and verdict.failure.output == "out" and verdict.failure.detail


def test_wrong_device_is_a_type_error(reference):
    verdict = _check(reference.clone(), reference, spec=ExpectedOutput("out", (64, 32), "float32", "cuda"))
    assert verdict.failure.rule == "device" and verdict.status is EvaluationStatus.INCORRECT_DTYPE


def test_matched_ratio_and_error_cap(reference):
    output = reference.clone()
    output[0, :5] += 0.05  # 5 of 2048 elements outside atol + rtol * |ref|: 99.76% matched
    assert _check(output, reference).status is EvaluationStatus.PASSED  # default ratio 0.99
    strict = _check(output, reference, Tolerance(required_matched_ratio=1.0))
    assert strict.failure.rule == "tolerance" and strict.failure.value == pytest.approx(1 - 5 / 2048)
    capped = _check(output, reference, Tolerance(max_error_cap=0.01))
    assert capped.failure.rule == "error_cap" and capped.failure.value == pytest.approx(0.05, abs=1e-6)
    output[0, :5] += 1.0  # the same few elements far off: matched ratio fine, error energy is not
    assert _check(output, reference).failure.rule == "relative_error_norm"


def test_zero_output_fails_even_when_within_absolute_tolerance(reference):
    small = reference * 1e-4  # every element below atol=1e-2
    verdict = _check(torch.zeros_like(small), small)
    assert verdict.failure.rule == "zero_output"


def test_constant_output_fails(reference):
    small = reference * 1e-4
    verdict = _check(torch.full_like(small, 1e-5), small)
    assert verdict.failure.rule == "constant_output"


def test_scale_invariant_error_catches_what_atol_hides(reference):
    small = reference * 1e-3
    wrong = small + 2e-3 * torch.randn_like(small)  # within atol nearly everywhere, yet twice the signal
    verdict = _check(wrong, small)
    assert verdict.failure.rule == "relative_error_norm"
    assert verdict.failure.value > 1 and verdict.failure.limit == 0.02


def test_rounding_noise_is_judged_by_the_tolerance_alone_as_upstream_judges_it():
    """A gradient zero in exact arithmetic, computed in bf16: the reference is noise around the float64 result's
    zero. An honest kernel summing in another order gives other noise, or exact zeros: both pass by atol."""
    generator = torch.Generator().manual_seed(1)
    golden = torch.randn(64, 32, generator=generator, dtype=torch.float64) * 1e-12  # zero but for fp64 rounding
    noise = torch.randn(64, 32, generator=generator) * 1e-3  # the reference's rounding noise, below atol=1e-2
    other_order = torch.randn(64, 32, generator=generator) * 1e-3
    for honest in (other_order, torch.zeros_like(noise)):
        verdict = _check(honest, noise, golden=golden)
        assert verdict.status is EvaluationStatus.PASSED, verdict.failure
        norm_rule = next(c for c in verdict.checks if c.rule == "relative_error_norm")
        assert norm_rule.passed and "not applied" in norm_rule.detail and "rounding noise" in norm_rule.detail
    assert _check(noise + 0.05, noise, golden=golden).failure.rule == "tolerance"  # atol still holds


def test_small_outputs_the_golden_result_confirms_keep_the_relative_norm_rule(reference):
    small = reference * 1e-3
    wrong = small + 2e-3 * torch.randn_like(small)  # within atol nearly everywhere
    verdict = _check(wrong, small, golden=small.double())
    assert verdict.failure.rule == "relative_error_norm"
    assert _check(torch.zeros_like(small), small, golden=small.double()).failure.rule == "zero_output"


def test_precision_downgrade_against_float64_golden():
    a, b = torch.randn(64, 256, dtype=torch.float64), torch.randn(256, 32, dtype=torch.float64)
    golden = a @ b
    reference = a.float() @ b.float()
    bf16 = (a.bfloat16() @ b.bfloat16()).float()  # passes atol/rtol 1e-2... almost: loosen to make the point
    loose = Tolerance(max_atol=1.0, max_rtol=0.1)
    verdict = _check(bf16, reference, loose, golden=golden)
    assert verdict.failure.rule == "precision_downgrade"
    assert verdict.golden["out"]["solution_error"] > 100 * verdict.golden["out"]["reference_error"]
    honest = (a @ b).float()  # a different (better) float32 algorithm is not penalised
    assert _check(honest, reference, loose, golden=golden).status is EvaluationStatus.PASSED


def test_golden_record_keeps_the_round_closest_to_the_limit():
    a, b = torch.randn(64, 256, dtype=torch.float64), torch.randn(256, 32, dtype=torch.float64)
    golden, reference = a @ b, (a.float() @ b.float())
    verdict = Verdict()
    for round_index, output in enumerate([reference.clone(), reference * (1 + 2e-6), reference.clone()]):
        check_outputs([output], ["cpu"], [reference], [SPEC], Tolerance(), verdict, round_index, golden=[golden])
    assert verdict.status is EvaluationStatus.PASSED
    assert verdict.golden["out"]["solution_error"] > 2 * verdict.golden["out"]["reference_error"]


def test_negative_infinity_rule():
    reference = torch.tensor([[0.5, float("-inf")]] * 4)
    spec = ExpectedOutput("lse", (4, 2), "float32", "cpu")
    allowed = Tolerance(allow_negative_inf=True)
    assert _check(reference.clone(), reference, allowed, spec=spec).status is EvaluationStatus.PASSED
    assert _check(reference.nan_to_num(neginf=-1e4), reference, allowed, spec=spec).failure.rule == "tolerance"
    assert reference_problem([reference], [spec], Tolerance()) is not None  # -inf not allowed by the workload
    assert reference_problem([reference], [spec], allowed) is None


INF, NAN = math.inf, math.nan


@pytest.mark.parametrize(
    "out, ref, matches, evaluator_rule",
    [
        (1.5, 1.5 + 1e-3, True, None),  # finite: within atol + rtol * |ref|
        (1.5, 2.5, False, "tolerance"),  # finite: outside
        (-INF, -INF, True, None),  # the same infinity: agreement (the workload allows -inf)
        (INF, INF, True, "inf"),  # agreement too, but the evaluator allows no +inf in an output
        (1.5, -INF, False, "tolerance"),  # a finite value never matches an infinity, however large rtol * |ref| is
        (INF, 1.5, False, "inf"),
        (INF, -INF, False, "inf"),
        (NAN, 1.5, False, "nan"),
        (NAN, NAN, False, "nan"),  # NaN equals nothing, itself included
        (1.5, NAN, False, "reference"),  # a NaN or +inf reference is INVALID_REFERENCE: no output is compared with it
        (-INF, INF, False, "reference"),
    ],
)
def test_the_tolerance_rule_on_values_that_are_not_finite(out, ref, matches, evaluator_rule):
    """One position of 100 differs; every one must match. `within_tolerance` is what `solbench validate` asks
    (suite/validate.py), `check_outputs` what the evaluator asks: one rule, the evaluator's nan/inf rules first."""
    tolerance = Tolerance(required_matched_ratio=1.0, allow_negative_inf=True)
    base = torch.linspace(1.0, 2.0, 100)
    output, reference = base.clone(), base.clone()
    output[0], reference[0] = out, ref
    assert within_tolerance(output, reference, tolerance) is matches
    spec = ExpectedOutput("out", (100,), "float32", "cpu")
    if evaluator_rule == "reference":
        assert reference_problem([reference], [spec], tolerance) is not None
        return
    verdict = _check(output, reference, tolerance, spec=spec)
    assert (verdict.failure.rule if verdict.failure else None) == evaluator_rule


def test_matching_infinities_are_left_out_of_the_ratio_and_unmatched_ones_fail_the_cap():
    reference = torch.full((100,), -INF)
    reference[:10] = torch.linspace(1.0, 2.0, 10)  # a masked output: 90 positions carry no value
    output = reference.clone()
    output[0] = 9.0
    measured = measure_tolerance(output, reference, Tolerance())
    assert (measured.compared, measured.mismatched, measured.matched_ratio) == (10, 1, 0.9)  # not 99 of 100
    spec = ExpectedOutput("out", (100,), "float32", "cpu")
    allowed = Tolerance(allow_negative_inf=True)
    assert _check(output, reference, allowed, spec=spec).failure.value == pytest.approx(0.9)

    output = reference.clone()
    output[50] = -1e30  # finite where the reference is -inf: one mismatch of 100, an infinite error
    measured = measure_tolerance(output, reference, Tolerance())
    assert measured.max_absolute == INF and measured.matched_ratio == pytest.approx(10 / 11)
    assert not within_tolerance(output, reference, Tolerance(required_matched_ratio=0.9, max_error_cap=1e6))
    capped = _check(
        output, reference, Tolerance(required_matched_ratio=0.9, max_error_cap=1e6, allow_negative_inf=True), spec=spec
    )
    assert capped.failure.rule == "error_cap" and capped.failure.value == INF


def test_reference_with_nan_is_an_invalid_reference():
    reference = torch.tensor([float("nan"), 1.0])
    assert "NaN" in reference_problem([reference], [ExpectedOutput("o", (2,), "float32", "cpu")], Tolerance())


def test_integer_outputs_compare_exactly():
    spec = ExpectedOutput("ids", (5,), "int64", "cpu")
    reference = torch.tensor([1, 2, 3, 4, 5])
    assert _check(reference.clone(), reference, spec=spec).status is EvaluationStatus.PASSED
    assert _check(reference + 1, reference, spec=spec).failure.rule == "tolerance"
