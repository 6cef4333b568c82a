"""The suite's makeup beside SOL-ExecBench's: the counts a suite at the real benchmark's scale reaches.

SOL-ExecBench publishes 235 problems from 124 models (L1 94, L2 82, Quant 33, FlashInfer-Bench 26; 46
backward; per family: state-space/linear attention about 18, attention 72, MoE 36, RoPE and KV-cache writes
19, MLA 10, NVFP4 15), about 16.8 workloads per problem whose median largest workload moves 403 MB. The
targets below ask for at least that, and at least 260 problems in all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from solbench.suite.stats import LARGE_BYTES, SuiteStats

MIN_GPU_WORKLOADS = 16


@dataclass(frozen=True)
class Target:
    name: str
    wanted: float
    measure: Callable[[SuiteStats], float]
    unit: str = ""

    def met(self, stats: SuiteStats) -> bool:
        return self.measure(stats) >= self.wanted


def _set(name: str) -> Callable[[SuiteStats], float]:
    return lambda stats: stats.counts["set"][name]


def _family(name: str) -> Callable[[SuiteStats], float]:
    return lambda stats: stats.families[name]


def _median_largest(stats: SuiteStats) -> float:
    return stats.tiers["gpu"].as_json()["median_largest_workload_bytes"] if "gpu" in stats.tiers else 0


def _fewest_gpu_workloads(stats: SuiteStats) -> float:
    counts = stats.tiers["gpu"].workload_counts if "gpu" in stats.tiers else []
    return min(counts) if counts else 0


TARGETS: tuple[Target, ...] = (
    Target("problems", 260, lambda s: s.problems),
    Target("architectures", 124, lambda s: len(s.architectures)),
    Target("L1", 94, _set("L1")),
    Target("L2", 82, _set("L2")),
    Target("Quant", 33, _set("Quant")),
    Target("FIB", 26, _set("FIB")),
    Target("backward", 46, lambda s: s.counts["pass"]["backward"]),
    Target("family ssm", 18, _family("ssm")),
    Target("family attention", 72, _family("attention")),
    Target("family moe", 36, _family("moe")),
    Target("family rope_kv", 19, _family("rope_kv")),
    Target("family mla", 10, _family("mla")),
    Target("family nvfp4", 15, _family("nvfp4")),
    Target("median largest GPU-tier workload", LARGE_BYTES, _median_largest, "bytes"),
    Target("GPU-tier workloads of the problem with fewest", MIN_GPU_WORKLOADS, _fewest_gpu_workloads),
)


def target_report(stats: SuiteStats) -> list[dict]:
    return [
        {
            "target": t.name,
            "wanted": t.wanted,
            "value": t.measure(stats),
            "met": t.met(stats),
            **({"unit": t.unit} if t.unit else {}),
        }
        for t in TARGETS
    ]
