"""Correctness tolerances by output dtype, justified by the dtype's precision.

A solution may sum in another order or fuse differently than the reference, so its result may
differ by a few units in the last place (ulp) of the output dtype; tolerances allow about that
and no more. ``unit roundoff`` below is 2^-(mantissa bits + 1) relative.
"""

from __future__ import annotations

from typing import Any

# dtype -> (atol, rtol, why)
_BY_DTYPE: dict[str, tuple[float, float, str]] = {
    "float64": (1e-8, 1e-8, "fp64 rounding differences only"),
    "float32": (1e-4, 1e-4, "fp32 unit roundoff 6e-8; 1e-4 covers reordered sums over ~10^4 terms, not TF32 (5e-4)"),
    "float16": (1e-2, 1e-2, "fp16 unit roundoff 4.9e-4: about 20 ulp, for fp32-accumulated reductions rounded once"),
    "bfloat16": (2e-2, 2e-2, "bf16 unit roundoff 3.9e-3: about 5 ulp"),
    "float8_e4m3fn": (1.3e-1, 1.3e-1, "e4m3 unit roundoff 6.25e-2: one ulp, for a rounding flip at a tie"),
    "float8_e5m2": (2.6e-1, 2.6e-1, "e5m2 unit roundoff 1.25e-1: one ulp"),
}
_EXACT = (0.0, 0.0, "integer or boolean output: must match exactly")


def tolerance_for(dtype: str, *, matched_ratio: float = 0.99) -> dict[str, Any]:
    """The workload ``tolerance`` block for an output of this dtype."""
    atol, rtol, _ = _BY_DTYPE.get(dtype, _EXACT)
    ratio = 1.0 if (atol, rtol) == (0.0, 0.0) else matched_ratio
    return {"max_atol": atol, "max_rtol": rtol, "required_matched_ratio": ratio}


def loosest(dtypes) -> str:
    """The least precise of the output dtypes `dtypes`, whose tolerance a problem's workloads take: the one with
    the widest tolerance (integer and boolean outputs are exact; all of them exact: the first)."""
    return max(dtypes, key=lambda dtype: _BY_DTYPE.get(dtype, _EXACT)[0])


def justification(dtype: str) -> str:
    return _BY_DTYPE.get(dtype, _EXACT)[2]


def table() -> list[tuple[str, float, float, str]]:
    """(dtype, atol, rtol, why) rows for the README."""
    return [(dtype, atol, rtol, why) for dtype, (atol, rtol, why) in _BY_DTYPE.items()]
