"""Summary statistics of timing samples: pure functions on lists of seconds."""

from __future__ import annotations

import math
from collections.abc import Sequence


def mean(samples: Sequence[float]) -> float:
    return sum(samples) / len(samples)


def quantile(samples: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (numpy's default method), q in [0, 1]."""
    ordered = sorted(samples)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(samples: Sequence[float]) -> float:
    return quantile(samples, 0.5)


def std(samples: Sequence[float]) -> float:
    """Sample standard deviation (n - 1); zero for fewer than two samples."""
    if len(samples) < 2:
        return 0.0
    centre = mean(samples)
    return math.sqrt(sum((s - centre) ** 2 for s in samples) / (len(samples) - 1))


def coefficient_of_variation(samples: Sequence[float]) -> float:
    centre = mean(samples)
    return std(samples) / centre if centre > 0 else 0.0


def relative_standard_error(samples: Sequence[float]) -> float:
    """Standard error of the mean over the mean: how well the mean is known, not how noisy a call is."""
    if len(samples) < 2:
        return math.inf
    centre = mean(samples)
    return std(samples) / math.sqrt(len(samples)) / centre if centre > 0 else math.inf
