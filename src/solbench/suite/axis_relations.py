"""Relations between a problem's var axes that every published workload keeps.

A definition rarely declares how its var axes relate, yet its reference may rely on it: an output of
`logits_to_keep` rows sliced from `seq_len` ones needs ``logits_to_keep <= seq_len``; patches merged four to one
need ``num_patches == 4 x num_merged_patches``. Halving one axis and not the other (the CPU tier's derivation,
suite/tiers.py) breaks such a relation. Inferred from the published workloads they are only candidates (with
one published workload every pair of axes keeps a ratio), so the derivation keeps them only where a workload
derived without them made the reference disagree with the definition.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

from solbench.spec.problem import Problem


@dataclass(frozen=True)
class AxisRelations:
    at_most: tuple[tuple[str, str], ...] = ()
    """(a, b): a <= b in every published workload, a < b in some (equal in all is a ratio of 1)."""
    ratios: tuple[tuple[str, str, Fraction], ...] = ()
    """(a, b, r): a == r x b in every published workload."""

    @classmethod
    def published(cls, problem: Problem) -> AxisRelations:
        """The relations every published workload of `problem` keeps between its var axes."""
        axes = [a for a in problem.definition.var_axes if all(w.axes.get(a, 0) > 0 for w in problem.workloads)]
        values = {a: [w.axes[a] for w in problem.workloads] for a in axes}
        at_most, ratios = [], []
        for a, b in combinations(axes, 2):
            fractions = {Fraction(x, y) for x, y in zip(values[a], values[b])}
            if len(fractions) == 1:
                ratios.append((a, b, fractions.pop()))
            elif all(x <= y for x, y in zip(values[a], values[b])):
                at_most.append((a, b))
            elif all(x >= y for x, y in zip(values[a], values[b])):
                at_most.append((b, a))
        return cls(tuple(at_most), tuple(ratios))

    def broken(self, axes: dict[str, int]) -> list[str]:
        """The relations `axes` does not keep, as text (``seq_len >= logits_to_keep``)."""
        broken = [f"{b} >= {a}" for a, b in self.at_most if a in axes and b in axes and axes[a] > axes[b]]
        return broken + [
            f"{a} = {ratio} x {b}"
            for a, b, ratio in self.ratios
            if a in axes and b in axes and Fraction(axes[a], axes[b]) != ratio
        ]

    def tied(self, axis: str) -> set[str]:
        """`axis` and every axis in a fixed ratio with it, directly or through others: they scale together."""
        group = {axis}
        grown = True
        while grown:
            grown = False
            for a, b, _ in self.ratios:
                if (a in group) != (b in group):
                    group |= {a, b}
                    grown = True
        return group

    def describe(self) -> str:
        """Every relation, as text, for a note."""
        return ", ".join([f"{b} >= {a}" for a, b in self.at_most] + [f"{a} = {r} x {b}" for a, b, r in self.ratios])
