"""The statistical check of a workload whose outputs are samples (spec/distribution.py): N draws from the
reference and N from the solution per checked row, compared by total variation distance (sample_distance.py).

The reference draws a pilot sample first (a quarter of N, at least one call) that chooses the cells, then N more;
the solution draws N with random inputs of its own, never the reference's: a sampler that draws differently from
the reference, but from the same distribution, passes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from solbench.evaluation.draws import DrawSet
from solbench.evaluation.sample_distance import RowDistance, distance_bound, row_distance
from solbench.spec.distribution import DistributionCheck

PILOT_SHARE = 0.25
"""The pilot sample's size as a share of N: it only has to find the frequent outcomes."""

Fresh = list[tuple[int, Any]]


@dataclass(frozen=True)
class DistributionResult:
    rows: list[RowDistance]
    draws: int
    """N, per row and per side."""

    @property
    def worst(self) -> RowDistance:
        """The row closest to (or farthest past) its bound."""
        return max(self.rows, key=lambda r: r.distance / r.bound)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)

    def detail(self) -> str:
        worst = self.worst
        verdict = "above" if not worst.passed else "within"
        return (
            f"total variation distance {worst.distance:.4f} {verdict} the bound {worst.bound:.4f} at row {worst.row} "
            f"({self.draws} draws each from the reference and the solution, {worst.cells} cells; "
            f"{len(self.rows)} row(s) checked)"
        )


def compare_samples(
    check: DistributionCheck,
    draw_set: DrawSet,
    reference: Callable[[list], list],
    candidate: Callable[[Fresh], list],
    generator,
) -> DistributionResult:
    """Draw from `reference` (called on the draw set's inputs) and `candidate` (called with fresh random inputs
    only: it holds the draw set already) and compare row by row."""
    import torch

    def sample(calls: int, draw: Callable[[Fresh], list]):
        return torch.cat([draw_set.outcomes(draw(draw_set.fresh(generator))) for _ in range(calls)], dim=1)

    pilot_calls = max(1, math.ceil(PILOT_SHARE * draw_set.calls))
    pilot = sample(pilot_calls, lambda fresh: reference(draw_set.with_values(fresh)))
    truth = sample(draw_set.calls, lambda fresh: reference(draw_set.with_values(fresh)))
    drawn = sample(draw_set.calls, candidate)
    rows = []
    for position, row in enumerate(draw_set.rows):
        distance, cells = row_distance(pilot[position], truth[position], drawn[position], max_cells=check.cells)
        bound = check.max_distance or distance_bound(draw_set.draws, cells, len(draw_set.rows), check.false_failure)
        rows.append(RowDistance(row=row, distance=distance, bound=bound, cells=cells))
    return DistributionResult(rows=rows, draws=draw_set.draws)
