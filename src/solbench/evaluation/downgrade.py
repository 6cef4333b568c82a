"""Telling a precision downgrade from a wrong result, once a solution is too far from the float64 golden result.

The precision rule (correctness.py) fails a solution whose error against the golden result is well above
the reference's. Two different mistakes do that: computing in a lower precision (bf16, fp16, TF32, fp8)
and computing something else (variance instead of the mean square, a wrong epsilon). Sending an agent
after a precision problem when its algorithm is wrong wastes its rounds, so the rule names the cause.

The test: a lower precision p explains the error when the solution's error points the way the error
of the reference run on p-rounded inputs points (in float64, its output rounded to p or not), and is
not far larger than it. Rounding the same inputs to the same grid makes the same errors, so a real
downgrade's error is aligned with that run's (cosine 0.4 to 1.0: 1.0 for a matrix product, about 0.5
where intermediate roundings add their own noise), while a systematic error is not (cosine near 0,
whatever its size). `MIN_ALIGNMENT` is the cut; for a tiny output a chance alignment is likelier,
so the cut rises to 3 / sqrt(n) there (at most `MAX_ALIGNMENT`).

A partial downgrade (only a reduction in bf16, say) may not align with the whole reference in p; it is
then called a wrong result, and the message says that lower precision in part of the computation
is one way to get there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DOWNGRADE_PRECISIONS = {
    "tf32": 2.0**-11,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
    "float8_e4m3fn": 2.0**-4,
    "float8_e5m2": 2.0**-3,
}
"""The precisions a solution may have computed in instead of the output's, with their unit roundoffs."""
MIN_ALIGNMENT = 0.3
MAX_ALIGNMENT = 0.9
EXPLAINED_FACTOR = 16.0
"""The solution's error may be this many times the lower-precision run's and still be explained by it."""

LowerPrecisionRun = Callable[[str], Any]
"""Given a precision's name: the reference's output (float64) on inputs rounded to it, or None where it cannot run."""


@dataclass(frozen=True)
class Diagnosis:
    """Why a solution is far from the golden result."""

    precision: str | None
    """The lower precision that explains the error, or None: a wrong result."""
    alignment: dict[str, float]
    """Per precision tried: the cosine between the solution's error and that precision's."""

    @property
    def rule(self) -> str:
        return "precision_downgrade" if self.precision else "wrong_result"


def round_to_precision(tensor, precision: str):
    """`tensor` (float32 or wider) rounded to the grid of `precision`, as float64; TF32 rounds float32's mantissa
    to 10 bits, to nearest (ties away from zero, as the hardware's conversion does)."""
    import torch

    if precision == "tf32":
        bits = tensor.to(torch.float32).contiguous().view(torch.int32)
        return ((bits + 0x1000) & ~0x1FFF).view(torch.float32).to(torch.float64)
    return tensor.to(getattr(torch, precision)).to(torch.float64)


def lower_precisions(unit_roundoff: float) -> list[str]:
    """The precisions coarser than an output whose unit roundoff is `unit_roundoff`, finest first."""
    return [name for name, roundoff in DOWNGRADE_PRECISIONS.items() if roundoff > unit_roundoff]


def alignment_cut(elements: int) -> float:
    return min(MAX_ALIGNMENT, max(MIN_ALIGNMENT, 3 / math.sqrt(max(elements, 1))))


def diagnose(out, golden, precisions: list[str], lower_run: LowerPrecisionRun) -> Diagnosis:
    """Which of `precisions` explains `out`'s error against `golden` (float64 tensors of one shape), if any.

    Each precision's run is asked for only until one explains the error (the runs cost a reference call each).
    """
    import torch

    error = torch.sub(out.to(torch.float64), golden)
    error_norm = float(torch.linalg.vector_norm(error))
    cut = alignment_cut(error.numel())
    alignment: dict[str, float] = {}
    for precision in precisions:
        lowered = lower_run(precision)
        if lowered is None or tuple(lowered.shape) != tuple(golden.shape):
            continue
        best = -1.0
        for variant in (lowered, round_to_precision(lowered, precision)):  # its output kept wide, or rounded too
            expected = torch.sub(variant, golden)
            expected_norm = float(torch.linalg.vector_norm(expected))
            if not math.isfinite(expected_norm) or expected_norm == 0 or error_norm > EXPLAINED_FACTOR * expected_norm:
                continue
            best = max(best, float(torch.sum(error * expected)) / (error_norm * expected_norm))
        if best > -1.0:
            alignment[precision] = round(best, 3)
        if best >= cut:
            return Diagnosis(precision, alignment)
    return Diagnosis(None, alignment)
