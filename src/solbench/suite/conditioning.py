"""Ill-conditioned problems: a tolerance that cannot tell an honest change of accumulation order from an error.

A kernel may sum in any order; the tolerance has to admit what that changes. Two honest alternatives to the
reference's own result are measured against it under the workload's tolerance, as the evaluator would judge them:

- the reference itself at another CPU thread count (its sums split differently). Failing that, a solution that
  matches the reference on one machine fails on another: an error of the problem.
- the float64 golden result rounded to each output's dtype: what an exact kernel returns. Failing that, a kernel
  more accurate than the reference fails (a warning: the evaluator compares with the reference, as upstream does).

An output whose reference is farther from the float64 result than the relative-norm rule allows (rounding noise,
say a gradient zero in exact arithmetic computed in bf16) is reported too: the evaluator judges it by the
tolerance alone (correctness.py), as upstream's checker judges every output.
"""

from __future__ import annotations

from dataclasses import dataclass

from solbench.evaluation.correctness import RELATIVE_NORM_FLOOR, ExpectedOutput, as_comparable, measure_tolerance
from solbench.evaluation.reference import ReferenceProgram
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.workload import Tolerance
from solbench.torch_threads import at_most_threads


@dataclass(frozen=True)
class ConditioningFinding:
    output: str
    message: str
    """What was compared and how it measured, against which tolerance."""
    severity: str
    """``error``: the reference disagrees with itself; ``warning``: with the exact result, or noise."""


def conditioning_findings(
    reference: ReferenceProgram, inputs: list, truth: list, expected: list[ExpectedOutput], tolerance: Tolerance
) -> list[ConditioningFinding]:
    """Measure both alternatives on `inputs` (`truth`: the reference's outputs for them at this thread count)."""
    return [
        *_by_thread_count(reference, inputs, truth, expected, tolerance),
        *_against_golden(reference, inputs, truth, expected, tolerance),
    ]


def _by_thread_count(reference, inputs, truth, expected, tolerance) -> list[ConditioningFinding]:
    import torch

    default = torch.get_num_threads()
    other_count = 1 if default > 1 else 2
    if other_count < default:
        with at_most_threads(other_count):
            other = reference.run(inputs)
    else:  # this process runs at one thread: a second is started for the comparison (no sandbox here)
        torch.set_num_threads(other_count)
        try:
            other = reference.run(inputs)
        finally:
            torch.set_num_threads(default)
    findings = []
    for spec, out, ref in zip(expected, other, truth):
        evidence = _disagreement(out, ref, tolerance)
        if evidence:
            findings.append(
                ConditioningFinding(
                    spec.name,
                    f"output {spec.name!r} with {other_count} CPU thread(s) against the one with {default}: "
                    f"{evidence}: its sums depend on how the work is split (accumulate low-precision "
                    "reductions in float32, or loosen the tolerance)",
                    "error",
                )
            )
    return findings


def _against_golden(reference, inputs, truth, expected, tolerance) -> list[ConditioningFinding]:
    import torch

    golden = reference.run_golden(inputs, truth)
    if golden is None:
        return []
    findings = []
    limit = max(RELATIVE_NORM_FLOOR, 2 * tolerance.max_rtol)
    for spec, exact, ref in zip(expected, golden, truth):
        values = as_comparable(ref).double()
        if not lookup_dtype(spec.dtype).is_floating or values.shape != ref.shape:
            continue  # packed FP4 unpacks to twice the values: a float64 result has no rounding to it here
        exact_norm = float(torch.linalg.vector_norm(exact))
        noise = float(torch.linalg.vector_norm(values - exact)) / exact_norm if exact_norm else float("inf")
        if float(torch.linalg.vector_norm(values)) > 0 and noise > limit:
            findings.append(
                ConditioningFinding(
                    spec.name,
                    f"output {spec.name!r}: the reference is {noise:.3g} from the float64 result in relative norm, "
                    f"more than the relative-norm rule's {limit:g} (near 1 or above: rounding noise, zero in exact "
                    f"arithmetic); judged by the tolerance alone (atol={tolerance.max_atol:g}), as upstream judges "
                    "it, not by the relative-norm rule",
                    "warning",
                )
            )
        evidence = _disagreement(exact.to(ref.dtype), ref, tolerance)
        if evidence:
            findings.append(
                ConditioningFinding(
                    spec.name,
                    f"output {spec.name!r}: the float64 result rounded to {spec.dtype} against the reference: "
                    f"{evidence}: a kernel more accurate than the reference fails",
                    "warning",
                )
            )
    return findings


def _disagreement(out, ref, tolerance: Tolerance) -> str | None:
    """How `out` fails `tolerance` against `ref`, or None where it passes."""
    if tuple(out.shape) != tuple(ref.shape):
        return f"shape {list(out.shape)} against {list(ref.shape)}"
    measured = measure_tolerance(as_comparable(out), as_comparable(ref), tolerance)
    if measured.passes(tolerance):
        return None
    cap = f", cap {tolerance.max_error_cap:g}" if tolerance.max_error_cap is not None else ""
    return (
        f"{measured.matched_ratio:.2%} of elements within atol={tolerance.max_atol:g}, rtol={tolerance.max_rtol:g} "
        f"({tolerance.required_matched_ratio:.0%} required{cap}), max abs error {measured.max_absolute:.3g}"
    )
