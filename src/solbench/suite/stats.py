"""`solbench suite stats`: how a suite spreads over sets, op types, dtypes, domains, models and kernel families."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from solbench.spec.dtypes import lookup_dtype
from solbench.spec.problem import Problem, find_problem_folders, load_problem
from solbench.spec.tiers import has_cpu_tier
from solbench.suite.architectures import architecture_of
from solbench.suite.families import FAMILIES, families_of
from solbench.suite.tiers import ANALYSIS_HARDWARE, workload_bytes

UNKNOWN = "(untagged)"
DIMENSIONS = ("set", "op_type", "dtype", "domain", "model", "pass", "origin")


def primary_dtype(problem: Problem) -> str:
    """The narrowest floating dtype among the inputs: what the kernel's main work runs in."""
    floating = [
        lookup_dtype(t.dtype)
        for t in problem.definition.inputs.values()
        if t.shape is not None and lookup_dtype(t.dtype).is_floating
    ]
    if not floating:
        floating = [lookup_dtype(t.dtype) for t in problem.definition.outputs.values()]
    return min(floating, key=lambda d: d.bits).name if floating else UNKNOWN


LARGE_BYTES = 400_000_000
SMALL_BYTES = 40_000_000


@dataclass
class TierStats:
    """One workload tier over the suite: sizes by the size-based estimate (bytes of every input and output,
    from the definition's shapes), FLOPs by the analyzer (`sol.analyze_problem`) when asked for."""

    tier: str
    problems: int = 0
    own_files: int = 0
    """Problems with a file for this tier (the CPU tier falls back to workload.jsonl where a problem has none)."""
    workloads: int = 0
    workload_counts: list[int] = field(default_factory=list)
    """Per problem: its workloads in this tier."""
    largest_bytes: list[int] = field(default_factory=list)
    """Per problem: the bytes of its largest workload."""
    total_bytes: int = 0
    flops: list[float] = field(default_factory=list)
    """Per problem: the FLOPs of its largest workload (analyzer), when counted."""
    total_flops: float = 0.0
    unanalysed: int = 0

    def as_json(self) -> dict:
        n = self.problems or 1
        return {
            "tier": self.tier,
            "problems": self.problems,
            "problems_with_own_file": self.own_files,
            "workloads": self.workloads,
            "workloads_per_problem": round(self.workloads / n, 2),
            "fewest_workloads": min(self.workload_counts) if self.workload_counts else 0,
            "median_largest_workload_bytes": int(median(self.largest_bytes)) if self.largest_bytes else 0,
            "problems_largest_at_least_400MB": sum(b >= LARGE_BYTES for b in self.largest_bytes),
            "problems_largest_at_most_40MB": sum(b <= SMALL_BYTES for b in self.largest_bytes),
            "total_bytes": self.total_bytes,
            "bytes_estimate": "size-based (inputs + outputs)",
            **(
                {
                    "median_largest_workload_flops": median(self.flops),
                    "total_flops": self.total_flops,
                    "flops_estimate": "analyzer (sol.analyze_problem)",
                    "problems_not_analysed": self.unanalysed,
                }
                if self.flops or self.unanalysed
                else {}
            ),
        }


@dataclass
class SuiteStats:
    problems: int = 0
    workloads: int = 0
    counts: dict[str, Counter] = field(default_factory=lambda: {d: Counter() for d in DIMENSIONS})
    set_by_domain: dict[str, Counter] = field(default_factory=dict)
    """set -> domain -> problems: the cross table a paper prints."""
    tiers: dict[str, TierStats] = field(default_factory=dict)
    """``gpu`` and ``cpu`` (the workloads a CPU run evaluates): sizes per tier."""
    families: Counter = field(default_factory=lambda: Counter({f: 0 for f in FAMILIES}))
    """family -> problems (suite.families: a problem may be in several)."""
    architectures: set[str] = field(default_factory=set)
    """Distinct model architectures (suite.architectures: variants of one count once)."""

    @property
    def models(self) -> int:
        return len(self.counts["model"])

    @property
    def backward_share(self) -> float:
        return self.counts["pass"]["backward"] / self.problems if self.problems else 0.0

    def as_json(self) -> dict:
        return {
            "problems": self.problems,
            "workloads": self.workloads,
            "models": self.models,
            "architectures": len(self.architectures),
            "families": dict(self.families),
            "backward_share": round(self.backward_share, 4),
            "counts": {d: dict(c.most_common()) for d, c in self.counts.items()},
            "set_by_domain": {s: dict(c) for s, c in self.set_by_domain.items()},
            "tiers": {t: stats.as_json() for t, stats in self.tiers.items()},
        }


def suite_stats(root: Path, *, flops: bool = False) -> SuiteStats:
    """Counts by dimension over the GPU tier (the published workloads), and sizes per tier; `flops` also
    analyses every workload of both tiers (seconds per problem)."""
    stats = SuiteStats(tiers={"gpu": TierStats("gpu"), "cpu": TierStats("cpu")})
    for folder in find_problem_folders(root):
        problem = load_problem(folder, "gpu")
        _add_tier(stats.tiers["gpu"], problem, own_file=True, flops=flops)
        own_cpu = has_cpu_tier(folder)
        _add_tier(
            stats.tiers["cpu"], load_problem(folder, "cpu") if own_cpu else problem, own_file=own_cpu, flops=flops
        )
        definition = problem.definition
        stats.problems += 1
        stats.workloads += len(problem.workloads)
        values = {
            "set": definition.tag("set"),
            "op_type": definition.op_type,
            "dtype": primary_dtype(problem),
            "domain": definition.tag("domain"),
            "model": definition.tag("model"),
            "pass": definition.tag("pass") or "forward",
            "origin": definition.tag("origin"),
        }
        for dimension, value in values.items():
            stats.counts[dimension][value or UNKNOWN] += 1
        stats.set_by_domain.setdefault(values["set"] or UNKNOWN, Counter())[values["domain"] or UNKNOWN] += 1
        stats.families.update(families_of(definition))
        if values["model"]:
            stats.architectures.add(architecture_of(values["model"]))
    return stats


def _add_tier(tier: TierStats, problem: Problem, *, own_file: bool, flops: bool) -> None:
    sizes = [workload_bytes(problem, w) for w in problem.workloads]
    tier.problems += 1
    tier.own_files += own_file
    tier.workloads += len(sizes)
    tier.workload_counts.append(len(sizes))
    tier.largest_bytes.append(max(sizes))
    tier.total_bytes += sum(sizes)
    if flops:
        counted = _analysed_flops(problem)
        if counted is None:
            tier.unanalysed += 1
        else:
            tier.flops.append(max(counted))
            tier.total_flops += sum(counted)


def _analysed_flops(problem: Problem) -> list[float] | None:
    from solbench.hardware import lookup
    from solbench.sol import analyze_problem

    try:  # shape-only, without the problem's input generator (which would build GPU-sized weights for real)
        results = analyze_problem(problem, lookup(ANALYSIS_HARDWARE))
    except Exception:  # the problem's own code raised under analysis (missing data, values it needs)
        return None
    return [r.flops for r in results]
