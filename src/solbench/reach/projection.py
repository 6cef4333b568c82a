"""Amdahl projection of the end-to-end gain if every covered problem's kernel ran at its speedup.

For one step of time T of which problem p covers t_p, the new step time is T - sum_p t_p (1 - 1/s_p) and
the gain T / T_new - 1. The uncertainty comes from both sides at once: each draw takes one profiled step
(its own T and t_p, so the profile's spread enters) and draws every s_p log-normally around its
geometric mean with its log spread (so the speedups' spread enters); the interval is the 5th-95th
percentile of the draws. Fixed seed: the same inputs give the same report.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from solbench.reach.speedups import Speedup

DRAWS = 2000


@dataclass(frozen=True)
class Projection:
    gain: float
    """Point estimate: the gain with the mean step and every speedup at its geometric mean."""
    low: float
    high: float
    median: float
    speedups: dict[str, Speedup]
    covered_problems: int
    source: str


def _gain(step: float, times: Mapping[str, float], speedups: Mapping[str, float]) -> float:
    saved = sum(t * (1 - 1 / speedups[p]) for p, t in times.items() if p in speedups)
    return step / (step - saved) - 1 if step > saved else float("inf")


def project(
    step_us: list[float],
    problem_us: Mapping[str, list[float]],
    speedups: Mapping[str, Speedup],
    source: str,
    seed: int = 0,
) -> Projection:
    used = {p: s for p, s in speedups.items() if p in problem_us}
    steps = len(step_us)
    mean_times = {p: statistics.fmean(v) for p, v in problem_us.items()}
    point = _gain(statistics.fmean(step_us), mean_times, {p: s.mean for p, s in used.items()})
    rng = random.Random(seed)
    draws = []
    for _ in range(DRAWS):
        i = rng.randrange(steps)
        drawn = {p: s.mean * (2.718281828459045 ** rng.gauss(0.0, s.log_std)) for p, s in used.items()}
        draws.append(_gain(step_us[i], {p: v[i] for p, v in problem_us.items()}, drawn))
    draws.sort()
    return Projection(
        gain=point,
        low=draws[int(0.05 * (DRAWS - 1))],
        high=draws[int(0.95 * (DRAWS - 1))],
        median=draws[DRAWS // 2],
        speedups=used,
        covered_problems=len(used),
        source=source,
    )
