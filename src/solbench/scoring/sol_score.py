"""The bounded SOL score: S = (T_b - T_SOL) / ((T_k - T_SOL) + (T_b - T_SOL)).

S is 0.5 when the kernel matches the baseline, tends to 1 as the kernel nears the speed of light
and to 0 as it falls behind the baseline; a failed kernel scores 0.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SolScore:
    score: float
    implausible: bool = False
    """T_k below T_SOL, faster than physics allows, or below the timer's resolution (see aggregate.score_trace):
    a measurement problem or a cheat."""
    note: str = ""


def sol_score(t_kernel: float, t_baseline: float, t_sol: float) -> SolScore:
    """Clamped to [0, 1]; any unit, as long as all three share it."""
    if t_kernel < t_sol:
        return SolScore(1.0, implausible=True, note=f"T_k {t_kernel:.4g} below T_SOL {t_sol:.4g}")
    headroom = t_baseline - t_sol
    if headroom <= 0:
        # The baseline already sits at the speed of light: matching it is all a kernel can do.
        return SolScore(0.5 if t_kernel <= t_baseline else 0.0, note="baseline at or below T_SOL")
    value = headroom / ((t_kernel - t_sol) + headroom)
    return SolScore(min(max(value, 0.0), 1.0))


def mean_score(scores: list[float]) -> float:
    return sum(scores) / len(scores) if scores else 0.0
