"""Two workload tiers for a recipe draft (docs/tiers.md): GPU-scale workloads in ``workload.jsonl``, the recipe's
own small ones kept as the CPU tier (``workload.cpu.jsonl``).

Used by the Quant, FIB and DLRM recipes (``quant.py``, ``fib.py``, ``dlrm.py``), whose functions still build their
drafts with the small CPU-sized workloads; ``drafts()`` there passes each draft through `with_gpu_tier` with the
problem's GPU sweep. The same rules as ``ssm._ssm``: at least 16 distinct GPU workloads, and a CPU workload the
GPU tier also has gets one axis raised until it is new (validate reads both tiers together, and two workloads
with the same axes and random inputs are duplicates).
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from solbench.suite.draft import ProblemDraft

MIN_GPU_WORKLOADS = 16


def with_gpu_tier(draft: ProblemDraft, gpu: Iterable[dict[str, int]]) -> ProblemDraft:
    """`draft` with `gpu` as its published workloads and its own (small) workloads as the CPU tier."""
    gpu = [dict(w) for w in gpu]
    keys = [_key(w) for w in gpu]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{draft.name}: duplicate GPU-tier workload")
    if len(gpu) < MIN_GPU_WORKLOADS:
        raise ValueError(f"{draft.name}: {len(gpu)} GPU-tier workloads, at least {MIN_GPU_WORKLOADS} needed")
    names = {tuple(sorted(w)) for w in gpu}
    cpu_names = {tuple(sorted(w)) for w in draft.workloads}
    if names != cpu_names:
        raise ValueError(f"{draft.name}: GPU-tier axes {sorted(names)} differ from the CPU tier's {sorted(cpu_names)}")
    return dataclasses.replace(draft, workloads=gpu, cpu_workloads=_disjoint(draft.workloads, gpu))


def _key(workload: dict[str, int]) -> tuple:
    return tuple(sorted(workload.items()))


def _disjoint(cpu: list[dict[str, int]], gpu: list[dict[str, int]]) -> list[dict[str, int]]:
    taken = {_key(w) for w in gpu}
    out = []
    for workload in cpu:
        workload = dict(workload)
        axis = "batch_size" if "batch_size" in workload else next(iter(workload))
        while _key(workload) in taken:
            workload[axis] += 1
        taken.add(_key(workload))
        out.append(workload)
    return out


def zipped(**axes: Iterable[int]) -> list[dict[str, int]]:
    """Workloads that zip the given sequences (of one length), not their product."""
    columns = {name: list(values) for name, values in axes.items()}
    if len({len(v) for v in columns.values()}) != 1:
        raise ValueError(f"zipped: sequences of different lengths {[len(v) for v in columns.values()]}")
    return [dict(zip(columns, row)) for row in zip(*columns.values())]
