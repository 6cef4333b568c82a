"""Deciding whether a solution's outputs are right: each rule named, measured and bounded.

Beyond the format's tolerance (atol, rtol, matched ratio, error cap, -inf rule), three views
that loose tolerances cannot fool: degenerate outputs (zero, constant), the error norm relative to
the reference's norm, and each side's distance to a float64 golden result (a precision downgrade, or a
wrong result where no lower precision explains the error: downgrade.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from solbench.evaluation.downgrade import LowerPrecisionRun, diagnose, lower_precisions
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.trace import CheckOutcome, EvaluationStatus, PrecisionRecord
from solbench.spec.workload import Tolerance

RELATIVE_NORM_FLOOR = 0.02
"""Largest ||out - ref|| / ||ref|| accepted when max_rtol is smaller; 2 x max_rtol otherwise."""
PRECISION_FACTOR = 16.0
"""A solution may be this many times farther from the float64 result than the reference is ..."""
PRECISION_FLOOR_ROUNDOFFS = 8.0
"""... or this many unit roundoffs of the output dtype, whichever is larger ..."""
ADMITTED_FACTOR = 4.0
"""... or, under the tolerance precision policy, this many times the error of the reference computed with
its matrix products at the admissible precision (sol/precision.py): bf16 work passes where bf16 is
admissible, fp8 work (16x bf16's roundoff) does not."""
UNIT_ROUNDOFF = {
    "float64": 2.0**-53,
    "float32": 2.0**-24,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
    "float8_e4m3fn": 2.0**-4,
    "float8_e5m2": 2.0**-3,
    "float8_e4m3fnuz": 2.0**-4,
    "float8_e5m2fnuz": 2.0**-3,
    "float8_e8m0fnu": 0.5,
    "float4_e2m1fn_x2": 0.25,
    "float4_e2m1": 0.25,
}
LowerRuns = Callable[[str], "list | None"]
"""A precision's name -> the reference's float64 outputs on inputs rounded to it, or None (downgrade.py)."""
_STATUS_OF_RULE = {
    "shape": EvaluationStatus.INCORRECT_SHAPE,
    "dtype": EvaluationStatus.INCORRECT_DTYPE,
    "device": EvaluationStatus.INCORRECT_DTYPE,
}


@dataclass(frozen=True)
class ExpectedOutput:
    name: str
    shape: tuple[int, ...]
    dtype: str
    device: str


@dataclass
class Verdict:
    """The outcome of checking one or more rounds; `failure` is the first rule that failed."""

    checks: list[CheckOutcome] = field(default_factory=list)
    failure: CheckOutcome | None = None
    max_absolute_error: float = 0.0
    max_relative_error: float = 0.0
    min_matched_ratio: float = 1.0
    max_relative_norm_error: float = 0.0
    has_nan: bool = False
    has_inf: bool = False
    golden: dict = field(default_factory=dict)

    @property
    def status(self) -> EvaluationStatus:
        if self.failure is None:
            return EvaluationStatus.PASSED
        return _STATUS_OF_RULE.get(self.failure.rule, EvaluationStatus.INCORRECT_NUMERICAL)

    def record(self, outcome: CheckOutcome, keep: bool) -> bool:
        if keep or not outcome.passed:
            self.checks.append(outcome)
        if not outcome.passed and self.failure is None:
            self.failure = outcome
        return outcome.passed


def as_comparable(tensor):
    """A float copy for comparison: float64 stays float64, everything else becomes float32.

    float32 holds every value of the narrower formats exactly; packed FP4 is unpacked to one value
    per nibble. Norms are accumulated in float64 separately (`_norm`).
    """
    import torch

    if str(tensor.dtype) == "torch.float4_e2m1fn_x2":
        table = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=torch.float32)
        raw = tensor.view(torch.uint8).long()
        return torch.stack([table[raw & 0xF], table[raw >> 4]], dim=-1).flatten(-2)
    if tensor.dtype == torch.float64:
        return tensor
    if tensor.dtype in (torch.int64, torch.int32):
        return tensor.to(torch.float64)  # float32 cannot hold every int32
    return tensor.to(torch.float32)


def _norm(tensor) -> float:
    import torch

    return float(torch.linalg.vector_norm(tensor))


def _all_finite(tensor) -> bool:
    """One fast reduction instead of an elementwise mask: a finite sum means finite elements."""
    import torch

    return math.isfinite(float(tensor.sum(dtype=torch.float64 if tensor.dtype == torch.float64 else None))) or bool(
        torch.isfinite(tensor).all()
    )


@dataclass(frozen=True)
class ToleranceMeasure:
    """How far one output is from its reference under the format's tolerance (`measure_tolerance`)."""

    compared: int
    """Elements compared: all but those holding the same infinity on both sides."""
    mismatched: int
    """Compared elements outside atol + rtol * |ref|."""
    max_absolute: float
    """The largest |out - ref|: inf where a NaN or an infinity meets anything but the same infinity."""
    max_relative: float
    difference_norm: float
    """||out - ref|| over the compared elements."""

    @property
    def matched_ratio(self) -> float:
        return 1.0 - self.mismatched / self.compared if self.compared else 1.0

    def passes(self, tolerance: Tolerance) -> bool:
        """The `tolerance` and `error_cap` rules: enough elements matched, and none past the cap (when set)."""
        return self.matched_ratio >= tolerance.required_matched_ratio and (
            tolerance.max_error_cap is None or self.max_absolute <= tolerance.max_error_cap
        )


def measure_tolerance(out, ref, tolerance: Tolerance, *, known_finite: bool = False) -> ToleranceMeasure:
    """The format's tolerance rule, in the one place both the evaluator and `solbench validate` read it.

    `out` and `ref` are `as_comparable` values of one shape. An element matches when
    |out - ref| <= atol + rtol * |ref|. Values that are not finite follow IEEE comparison, not that
    formula (which would let any finite value match an infinite reference: |x - inf| <= rtol * inf):

    - the same infinity on both sides (inf and inf, -inf and -inf) is exact agreement, so the element is
      left out of the comparison: neither matched nor counted, as the evaluator leaves out the -inf pairs
      a workload allows (`allow_negative_inf`), so that masked positions cannot dilute the errors of the
      positions that carry values;
    - an infinity against a finite value or the opposite infinity, and a NaN on either side (NaN equals
      nothing, itself included), is a mismatch whose error is infinite: it counts against the matched ratio
      and fails any `max_error_cap`.

    Whether a NaN or an infinity may appear at all is a separate question: the evaluator's `nan` and `inf`
    rules, checked before this one, and `reference_problem` for the reference. `known_finite`: the caller
    has checked that every value is finite, so the pass over them is skipped.
    """
    import torch

    if out.shape != ref.shape:
        raise ValueError(f"tolerance of shape {list(out.shape)} against {list(ref.shape)}: check the shape first")
    finite = known_finite or (_all_finite(ref) and _all_finite(out))
    if not finite:
        same_infinity = torch.isinf(ref) & (out == ref)
        if bool(same_infinity.any()):
            out, ref = out[~same_infinity], ref[~same_infinity]
    if out.numel() == 0:
        return ToleranceMeasure(compared=0, mismatched=0, max_absolute=0.0, max_relative=0.0, difference_norm=0.0)
    # Large temporaries are fresh pages (slow to fault in): two scratch buffers serve every step.
    difference = torch.sub(out, ref).abs_()
    unbounded = None if finite else ~(out.isfinite() & ref.isfinite())  # a NaN, or an infinity against another value
    if unbounded is not None:
        difference.masked_fill_(unbounded, math.inf)
    max_absolute = float(difference.max())
    difference_norm = _norm(difference)
    scratch = torch.abs(ref).clamp_min_(max(tolerance.max_atol, 1e-30))
    max_relative = float(torch.div(difference, scratch, out=scratch).max())
    torch.abs(ref, out=scratch).mul_(tolerance.max_rtol).add_(tolerance.max_atol)
    difference.sub_(scratch)  # now: how far each error lies beyond its bound
    del scratch
    if unbounded is not None:
        difference.masked_fill_(unbounded, math.inf)  # beyond any bound, an infinite one too (inf - inf is NaN)
    mismatched = int(torch.count_nonzero(difference > 0)) if float(difference.max()) > 0 else 0
    return ToleranceMeasure(
        compared=out.numel(),
        mismatched=mismatched,
        max_absolute=max_absolute,
        max_relative=max_relative,
        difference_norm=difference_norm,
    )


def within_tolerance(candidate, truth, tolerance: Tolerance) -> bool:
    """Whether `candidate` matches `truth` (tensors of any dtype) under the format's tolerance: the same shape,
    then `measure_tolerance`'s matched ratio and error cap. `solbench validate` asks this of the reference's
    own outputs, so it judges them by the rule the evaluator judges solutions by."""
    if tuple(candidate.shape) != tuple(truth.shape):
        return False
    return measure_tolerance(as_comparable(candidate), as_comparable(truth), tolerance).passes(tolerance)


def reference_problem(outputs: list, expected: list[ExpectedOutput], tolerance: Tolerance) -> str | None:
    """Why the reference's own outputs cannot serve as ground truth, or None."""
    import torch

    for value, spec in zip(outputs, expected):
        if (
            tuple(value.shape) != spec.shape
            or str(value.dtype).removeprefix("torch.") != lookup_dtype(spec.dtype).torch_name
        ):
            return (
                f"reference output {spec.name!r} is {str(value.dtype).removeprefix('torch.')}"
                f"{list(value.shape)}, the definition says {spec.dtype}{list(spec.shape)}"
            )
        values = as_comparable(value)
        if torch.isnan(values).any():
            return f"reference output {spec.name!r} contains NaN for these inputs"
        bad_inf = torch.isposinf(values) if tolerance.allow_negative_inf else torch.isinf(values)
        if bad_inf.any():
            return f"reference output {spec.name!r} contains inf (allow_negative_inf={tolerance.allow_negative_inf})"
    return None


def check_outputs(
    outputs: list,
    devices: list[str],
    reference: list,
    expected: list[ExpectedOutput],
    tolerance: Tolerance,
    verdict: Verdict,
    round_index: int,
    golden: list | None = None,
    keep_passed: bool = False,
    phase: str = "correctness",
    precision: PrecisionRecord | None = None,
    lower_run: LowerRuns | None = None,
) -> Verdict:
    """Apply every rule to every output of one round, adding to `verdict`; stops at the first failure.

    `precision` is the workload's precision record: under the tolerance policy the downgrade rule allows
    the error of the reference computed at the admissible matrix precision. `lower_run` (a precision's name ->
    the reference's float64 outputs on inputs rounded to it, or None) lets a solution too far from the golden
    result be diagnosed: `precision_downgrade` where a lower precision explains its error, else
    `wrong_result` (downgrade.py); without it the rule is `precision_downgrade`."""
    goldens = golden if golden is not None else [None] * len(expected)
    admitted = (
        precision.admitted_error
        if precision is not None and precision.policy == "tolerance" and precision.matrix_precision != "fp32"
        else None
    ) or []
    admitted = list(admitted)[: len(expected)] + [0.0] * (len(expected) - len(admitted))
    for index, (value, device, truth, spec, golden_value, admitted_error) in enumerate(
        zip(outputs, devices, reference, expected, goldens, admitted)
    ):
        if not _check_one(
            value,
            device,
            truth,
            spec,
            tolerance,
            verdict,
            round_index,
            golden_value,
            keep_passed,
            phase,
            admitted_error,
            _one_output(lower_run, index),
        ):
            break
    return verdict


def _one_output(lower_run: LowerRuns | None, index: int) -> LowerPrecisionRun | None:
    if lower_run is None:
        return None

    def run(precision: str):
        outputs = lower_run(precision)
        return outputs[index] if outputs is not None and index < len(outputs) else None

    return run


def _check_one(
    value,
    device,
    truth,
    spec: ExpectedOutput,
    tolerance: Tolerance,
    verdict: Verdict,
    round_index: int,
    golden,
    keep: bool,
    phase: str,
    admitted_error: float = 0.0,
    lower_run: LowerPrecisionRun | None = None,
) -> bool:
    def outcome(rule, passed, detail="", value=None, limit=None) -> bool:
        return verdict.record(
            CheckOutcome(
                rule=rule,
                passed=passed,
                detail=detail,
                value=value,
                limit=limit,
                output=spec.name,
                round=round_index,
                phase=phase,
            ),
            keep,
        )

    if not _check_structure(value, device, spec, outcome):
        return False
    if tolerance.distribution is not None:  # samples: their values are judged by their distribution instead
        return True
    return _check_values(
        as_comparable(value), as_comparable(truth), spec, tolerance, verdict, outcome, golden, admitted_error, lower_run
    )


def check_structure(
    outputs: list, devices: list[str], expected: list[ExpectedOutput], verdict: Verdict, round_index: int, phase: str
) -> Verdict:
    """The shape, dtype and device rules alone, for outputs whose values another rule judges (a statistical
    check's draws); stops at the first failure."""
    for value, device, spec in zip(outputs, devices, expected):

        def outcome(rule, passed, detail="", spec=spec) -> bool:
            return verdict.record(
                CheckOutcome(rule=rule, passed=passed, detail=detail, output=spec.name, round=round_index, phase=phase),
                False,
            )

        if not _check_structure(value, device, spec, outcome):
            break
    return verdict


def _check_structure(value, device, spec: ExpectedOutput, outcome) -> bool:
    shape = tuple(value.shape)
    if not outcome("shape", shape == spec.shape, f"shape {list(shape)}, expected {list(spec.shape)}"):
        return False
    dtype = str(value.dtype).removeprefix("torch.")
    if not outcome("dtype", dtype == lookup_dtype(spec.dtype).torch_name, f"dtype {dtype}, expected {spec.dtype}"):
        return False
    return outcome(
        "device", device.split(":")[0] == spec.device.split(":")[0], f"on device {device}, expected {spec.device}"
    )


def _check_values(
    out,
    ref,
    spec: ExpectedOutput,
    tolerance: Tolerance,
    verdict: Verdict,
    outcome,
    golden,
    admitted_error: float = 0.0,
    lower_run: LowerPrecisionRun | None = None,
) -> bool:
    if out.numel() == 0:
        return True
    finite = _all_finite(ref) and _all_finite(out)
    if finite:
        outcome("nan", True, "no NaN values", 0.0, 0.0)
        outcome("inf", True, "no infinite values", 0.0, 0.0)
    else:
        out, ref, golden, kept = _exclude_matching_negative_infinity(out, ref, golden, tolerance, verdict, outcome)
        if out is None:
            return False
        lower_run = _masked(lower_run, kept)
        if out.numel() == 0:
            return True
    measured = measure_tolerance(out, ref, tolerance, known_finite=finite)
    max_absolute, ratio = measured.max_absolute, measured.matched_ratio
    verdict.max_absolute_error = max(verdict.max_absolute_error, max_absolute)
    verdict.max_relative_error = max(verdict.max_relative_error, measured.max_relative)
    verdict.min_matched_ratio = min(verdict.min_matched_ratio, ratio)
    if not outcome(
        "tolerance",
        ratio >= tolerance.required_matched_ratio,
        f"{ratio:.4%} of elements within atol={tolerance.max_atol:g}, rtol={tolerance.max_rtol:g}; "
        f"{tolerance.required_matched_ratio:.2%} required (max abs error {max_absolute:.3g})",
        ratio,
        tolerance.required_matched_ratio,
    ):
        return False
    if tolerance.max_error_cap is not None and not outcome(
        "error_cap",
        max_absolute <= tolerance.max_error_cap,
        f"max abs error {max_absolute:.3g} above the cap {tolerance.max_error_cap:g}",
        max_absolute,
        tolerance.max_error_cap,
    ):
        return False
    golden_distance = _distance_to_golden(ref, golden) if golden is not None else None
    if not _check_not_degenerate(out, ref, measured.difference_norm, tolerance, verdict, outcome, golden_distance):
        return False
    if golden is not None:
        assert golden_distance is not None, "measured above with the golden result"
        return _check_precision(out, golden, spec, verdict, outcome, golden_distance, admitted_error, lower_run)
    return True


@dataclass(frozen=True)
class _GoldenDistance:
    """How far the reference's output lies from the float64 golden result (norms over the compared elements)."""

    golden_norm: float
    reference_error_norm: float

    @property
    def reference_error(self) -> float:
        """||ref - golden|| / ||golden||: the reference's own relative error (inf where the golden result is 0)."""
        if self.golden_norm == 0:
            return math.inf if self.reference_error_norm > 0 else 0.0
        return self.reference_error_norm / self.golden_norm


def _distance_to_golden(ref, golden) -> _GoldenDistance:
    import torch

    return _GoldenDistance(golden_norm=_norm(golden), reference_error_norm=_norm(torch.sub(golden, ref)))


def _masked(lower_run: LowerPrecisionRun | None, kept) -> LowerPrecisionRun | None:
    """`lower_run` with the elements the comparison left out (allowed -inf pairs) left out too."""
    if lower_run is None or kept is None:
        return lower_run

    def run(precision: str):
        lowered = lower_run(precision)
        return lowered[kept] if lowered is not None and lowered.shape == kept.shape else None

    return run


def _exclude_matching_negative_infinity(out, ref, golden, tolerance: Tolerance, verdict: Verdict, outcome):
    """The slow path for non-finite values: NaN and inf fail, except -inf pairs the workload allows.

    Returns the values left to compare and the mask that kept them (None: all kept), or four Nones when a rule
    failed.
    """
    import torch

    pairs = (torch.isneginf(out) & torch.isneginf(ref)) if tolerance.allow_negative_inf else None
    nan_count = int(torch.isnan(out).sum())
    infinite = torch.isinf(out) if pairs is None else torch.isinf(out) & ~pairs
    inf_count = int(infinite.sum())
    verdict.has_nan |= nan_count > 0
    verdict.has_inf |= inf_count > 0
    if not outcome("nan", nan_count == 0, f"{nan_count} NaN values", float(nan_count), 0.0):
        return None, None, None, None
    if not outcome(
        "inf", inf_count == 0, f"{inf_count} infinite values where the reference is finite", float(inf_count), 0.0
    ):
        return None, None, None, None
    if pairs is None or not bool(pairs.any()):
        return out, ref, golden, None
    keep = ~pairs
    return out[keep], ref[keep], (golden[keep] if golden is not None else None), keep


def _check_not_degenerate(
    out,
    ref,
    difference_norm: float,
    tolerance: Tolerance,
    verdict: Verdict,
    outcome,
    golden_distance: _GoldenDistance | None = None,
) -> bool:
    """The zero, constant and relative-norm rules, which hold a solution to the reference's scale.

    Not applied where the reference is itself farther from the float64 golden result than the rule allows (above
    all rounding noise: a gradient zero in exact arithmetic, computed in bf16, where exact zeros are the right
    answer): the rule then cannot tell an honest change of accumulation order from an error. Such an output is
    judged as upstream judges every output, by the format's tolerance alone (its atol), and the trace says so.
    """
    import torch

    reference_norm = _norm(ref)
    if reference_norm == 0 or not math.isfinite(reference_norm):
        return True
    limit = max(RELATIVE_NORM_FLOOR, 2 * tolerance.max_rtol)
    if golden_distance is not None and golden_distance.reference_error > limit:
        return outcome(
            "relative_error_norm",
            True,
            f"not applied: the reference itself is {golden_distance.reference_error:.3g} from the float64 result "
            f"in relative norm (above {limit:g}; rounding noise where near 1, as for a value zero in exact "
            "arithmetic), so the rule cannot tell an honest result from an error; judged by the tolerance "
            "alone, as upstream judges it",
        )
    low, high = (float(v) for v in torch.aminmax(out))
    if not outcome("zero_output", low != 0 or high != 0, "output is all zeros, the reference is not"):
        return False
    reference_low, reference_high = (float(v) for v in torch.aminmax(ref))
    constant = ref.numel() > 1 and reference_high > reference_low and low == high
    if not outcome("constant_output", not constant, f"output is constant ({low:g}), the reference is not"):
        return False
    relative_norm_error = difference_norm / reference_norm
    verdict.max_relative_norm_error = max(verdict.max_relative_norm_error, relative_norm_error)
    return outcome(
        "relative_error_norm",
        relative_norm_error <= limit,
        f"||out - ref|| / ||ref|| = {relative_norm_error:.3g} above {limit:g}",
        relative_norm_error,
        limit,
    )


def _check_precision(
    out,
    golden,
    spec: ExpectedOutput,
    verdict: Verdict,
    outcome,
    golden_distance: _GoldenDistance,
    admitted_error: float = 0.0,
    lower_run: LowerPrecisionRun | None = None,
) -> bool:
    import torch

    golden_norm = golden_distance.golden_norm
    if golden_norm == 0 or not math.isfinite(golden_norm):
        verdict.golden.setdefault(spec.name, "not checked: golden result is zero or not finite")
        return True
    solution_error = _norm(torch.sub(golden, out)) / golden_norm  # float64
    reference_error = golden_distance.reference_error
    allowed = max(
        PRECISION_FACTOR * reference_error,
        PRECISION_FLOOR_ROUNDOFFS * UNIT_ROUNDOFF[spec.dtype],
        ADMITTED_FACTOR * admitted_error,
    )
    worst = verdict.golden.get(spec.name)
    if not isinstance(worst, dict) or solution_error / allowed > worst["solution_error"] / worst["allowed"]:
        # every round and checked timed iteration is compared; the trace keeps the closest call to the limit
        verdict.golden[spec.name] = {
            "solution_error": solution_error,
            "reference_error": reference_error,
            "allowed": allowed,
        }
    measured = (
        f"{solution_error:.3g} relative to the float64 result vs the reference's {reference_error:.3g} "
        f"(allowed {allowed:.3g})"
    )
    if solution_error <= allowed:
        return outcome("precision_downgrade", True, measured, solution_error, allowed)
    asks = "admits" if admitted_error else "asks (--precision strict)"
    lowered = f"computed in lower precision than the problem {asks}"
    if lower_run is None:
        return outcome("precision_downgrade", False, f"{measured}: {lowered}", solution_error, allowed)
    diagnosis = diagnose(out, golden, lower_precisions(UNIT_ROUNDOFF.get(spec.dtype, 0.0)), lower_run)
    tried = ", ".join(f"{name} {cosine:.2f}" for name, cosine in diagnosis.alignment.items()) or "none could run"
    if diagnosis.precision is not None:
        detail = f"{measured}: {lowered}; the error follows the reference's in {diagnosis.precision} ({tried})"
    else:
        detail = (
            f"{measured}: a wrong result, not a precision downgrade: the error does not follow the reference's in "
            f"any lower precision (alignment: {tried}); check the algorithm against the reference (or a part "
            "computed in lower precision)"
        )
    return outcome(diagnosis.rule, False, detail, solution_error, allowed)
