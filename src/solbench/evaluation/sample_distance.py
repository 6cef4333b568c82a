"""How far a solution's samples lie from the reference's: total variation distance per row, and the bound a correct
sampler stays under.

The bound. Let X_1..X_N (reference) and Y_1..Y_N (solution) be independent draws from one distribution p, grouped
into K cells fixed beforehand. The empirical total variation distance is D = max over sets A of cells of
x(A) - y(A), where x(A) and y(A) are the shares of draws landing in A. For one A, x(A) - y(A) is a mean of 2N
independent terms, each spanning 1/N, so Hoeffding's inequality gives P(x(A) - y(A) >= t) <= exp(-N t^2). A union
over the 2^K - 2 sets that are neither empty nor all cells (those give 0) gives

    P(D >= t) <= (2^K - 2) exp(-N t^2),   so   t = sqrt((ln(2^K - 2) + ln(R / delta)) / N)

keeps a correct sampler's false failure below delta over R rows (union bound). This is the two-sample form of the
Bretagnolle-Huber-Carol inequality. The cells must not depend on the draws compared: they are the K - 1 outcomes
most frequent in a separate pilot sample of the reference, plus one cell for every other outcome. Grouping can
only lower the distance, so it never fails a correct sampler; it blinds the check to a bias that stays inside
the last cell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def distance_bound(draws: int, cells: int, rows: int, false_failure: float) -> float:
    """t above: the distance two correct samples of `draws` each, over `cells` cells, exceed with probability at most
    `false_failure` over `rows` rows."""
    if draws < 1 or cells < 2 or rows < 1 or not 0 < false_failure < 1:
        raise ValueError(f"no bound for draws={draws}, cells={cells}, rows={rows}, false_failure={false_failure}")
    return math.sqrt((math.log(2**cells - 2) + math.log(rows / false_failure)) / draws)


@dataclass(frozen=True)
class RowDistance:
    """One checked row: the distance measured over `cells` cells, and the bound it must not exceed."""

    row: int
    """The row's index in the workload's inputs (along the draw axis)."""
    distance: float
    bound: float
    cells: int

    @property
    def passed(self) -> bool:
        return self.distance <= self.bound


def row_distance(pilot, reference, candidate, *, max_cells: int) -> tuple[float, int]:
    """(empirical total variation distance, cells used) between two samples of one row.

    Each sample is a (draws, width) tensor, one outcome per line (every output's values of that row, as float64);
    `pilot` is a third, separate sample of the reference that chooses the cells.
    """
    import torch

    if reference.shape != candidate.shape:
        raise ValueError(f"samples of {list(reference.shape)} and {list(candidate.shape)}: draw as many of each")
    every = torch.cat([pilot, reference, candidate])
    _, outcome = torch.unique(every, dim=0, return_inverse=True)
    pilot_ids, reference_ids, candidate_ids = outcome.split([len(pilot), len(reference), len(candidate)])
    distinct = int(outcome.max()) + 1
    frequent = torch.bincount(pilot_ids, minlength=distinct)
    chosen = [int(i) for i in torch.argsort(frequent, descending=True, stable=True)[: max_cells - 1] if frequent[i] > 0]
    cell_of = torch.full((distinct,), len(chosen), dtype=torch.long)  # the last cell: every other outcome
    cell_of[torch.tensor(chosen, dtype=torch.long)] = torch.arange(len(chosen))
    cells = len(chosen) + 1
    reference_share = torch.bincount(cell_of[reference_ids], minlength=cells).double() / len(reference)
    candidate_share = torch.bincount(cell_of[candidate_ids], minlength=cells).double() / len(candidate)
    return float((reference_share - candidate_share).abs().sum()) / 2, cells
