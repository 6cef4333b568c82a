"""The bounded SOL score: S = (T_b - T_SOL) / ((T_k - T_SOL) + (T_b - T_SOL)), and the speed-of-light floor.

S is 0.5 when the kernel matches the baseline, tends to 1 as the kernel nears the speed of light
and to 0 as it falls behind the baseline; a failed kernel scores 0. A kernel measured below the
floor, T_SOL x (1 - margin) - the timer's resolution, is not scored at all (`below_floor`): it is
faster than the hardware allows, a measurement problem or a cheat, and counts as a failure.
"""

from __future__ import annotations

from dataclasses import dataclass

from solbench.hardware import LOCAL_ID

DATASHEET_MARGIN = 0.05
"""Relative margin under T_SOL on a datasheet device. Its figures are already the upper ones the sources give
(peak clocks, theoretical DRAM bandwidth), which no kernel reaches; the margin covers their rounding (three
significant figures: at most 0.5%) and boards whose clocks or memory run a few per cent above the quoted ones."""
MEASURED_MARGIN = 0.25
"""Relative margin under T_SOL on ``local``, whose memory bandwidth is measured by `solbench hw probe`, not
quoted: the best STREAM kernel of one probe, which a kernel run at another time, under another load, can beat."""
SPEED_OF_LIGHT_RULE = "speed_of_light"
"""`failed_rule` of an IMPLAUSIBLE trace: T_k below the speed-of-light floor."""


def floor_margin(hardware: str | None) -> float:
    """The relative margin under T_SOL on `hardware` (an id): MEASURED_MARGIN for a probed spec, else
    DATASHEET_MARGIN."""
    return MEASURED_MARGIN if (hardware or "").lower() == LOCAL_ID else DATASHEET_MARGIN


def sol_floor_ms(t_sol_ms: float, hardware: str | None, resolution_ms: float | None = None) -> float:
    """The least T_k (ms) that can be scored on `hardware`: T_SOL x (1 - margin) less the timer's resolution
    (a median of samples quantised to the resolution is off by at most that much; 0 where no resolution is
    stated)."""
    return t_sol_ms * (1 - floor_margin(hardware)) - (resolution_ms or 0.0)


def below_floor(
    t_kernel_ms: float, t_sol_ms: float, hardware: str | None, resolution_ms: float | None = None
) -> str | None:
    """Why `t_kernel_ms` is below the speed-of-light floor, or None when it is not."""
    floor = sol_floor_ms(t_sol_ms, hardware, resolution_ms)
    if t_kernel_ms >= floor:
        return None
    timer = f" less the timer's {resolution_ms:.4g} ms resolution" if resolution_ms else ""
    return (
        f"T_k {t_kernel_ms:.4g} ms is below the speed-of-light floor {floor:.4g} ms "
        f"(T_SOL {t_sol_ms:.4g} ms x (1 - {floor_margin(hardware):g}){timer}) on {hardware}"
    )


@dataclass(frozen=True)
class SolScore:
    score: float
    note: str = ""


def sol_score(t_kernel: float, t_baseline: float, t_sol: float) -> SolScore:
    """Clamped to [0, 1]; any unit, as long as all three share it. Check `below_floor` first: this function
    gives S = 1 to any T_k below T_SOL."""
    if t_kernel < t_sol:
        return SolScore(1.0, note=f"T_k {t_kernel:.4g} within the margin below T_SOL {t_sol:.4g}")
    headroom = t_baseline - t_sol
    if headroom <= 0:
        # The baseline already sits at the speed of light: matching it is all a kernel can do.
        return SolScore(0.5 if t_kernel <= t_baseline else 0.0, note="baseline at or below T_SOL")
    value = headroom / ((t_kernel - t_sol) + headroom)
    return SolScore(min(max(value, 0.0), 1.0))


def mean_score(scores: list[float]) -> float:
    return sum(scores) / len(scores) if scores else 0.0
