"""`solbench suite stats`: how a suite spreads over sets, op types, dtypes, domains and models."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from solbench.spec.dtypes import lookup_dtype
from solbench.spec.problem import Problem, find_problem_folders, load_problem

UNKNOWN = "(untagged)"
DIMENSIONS = ("set", "op_type", "dtype", "domain", "model", "pass", "origin")


def primary_dtype(problem: Problem) -> str:
    """The narrowest floating dtype among the inputs: what the kernel's main work runs in."""
    floating = [lookup_dtype(t.dtype) for t in problem.definition.inputs.values()
                if t.shape is not None and lookup_dtype(t.dtype).is_floating]
    if not floating:
        floating = [lookup_dtype(t.dtype) for t in problem.definition.outputs.values()]
    return min(floating, key=lambda d: d.bits).name if floating else UNKNOWN


@dataclass
class SuiteStats:
    problems: int = 0
    workloads: int = 0
    counts: dict[str, Counter] = field(default_factory=lambda: {d: Counter() for d in DIMENSIONS})
    set_by_domain: dict[str, Counter] = field(default_factory=dict)
    """set -> domain -> problems: the cross table a paper prints."""

    @property
    def models(self) -> int:
        return len(self.counts["model"])

    @property
    def backward_share(self) -> float:
        return self.counts["pass"]["backward"] / self.problems if self.problems else 0.0

    def as_json(self) -> dict:
        return {"problems": self.problems, "workloads": self.workloads, "models": self.models,
                "backward_share": round(self.backward_share, 4),
                "counts": {d: dict(c.most_common()) for d, c in self.counts.items()},
                "set_by_domain": {s: dict(c) for s, c in self.set_by_domain.items()}}


def suite_stats(root: Path) -> SuiteStats:
    stats = SuiteStats()
    for folder in find_problem_folders(root):
        problem = load_problem(folder)
        definition = problem.definition
        stats.problems += 1
        stats.workloads += len(problem.workloads)
        values = {
            "set": definition.tag("set"), "op_type": definition.op_type, "dtype": primary_dtype(problem),
            "domain": definition.tag("domain"), "model": definition.tag("model"),
            "pass": definition.tag("pass") or "forward", "origin": definition.tag("origin"),
        }
        for dimension, value in values.items():
            stats.counts[dimension][value or UNKNOWN] += 1
        stats.set_by_domain.setdefault(values["set"] or UNKNOWN, Counter())[values["domain"] or UNKNOWN] += 1
    return stats
