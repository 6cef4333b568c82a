"""Two workload tiers for a recipe draft (docs/tiers.md): GPU-scale workloads in ``workload.jsonl``, the recipe's
own small ones kept as the CPU tier (``workload.cpu.jsonl``).

Used by the Quant, FIB and DLRM recipes (``quant.py``, ``fib.py``, ``dlrm.py``), whose functions still build their
drafts with the small CPU-sized workloads; ``drafts()`` there passes each draft through `with_gpu_tier` with the
problem's GPU sweep: at least 16 distinct GPU workloads with the same axes as the recipe's. The CPU tier keeps the
recipe's workloads as they are, even a size the GPU tier also has (validate does not count a CPU workload that
repeats a published size as a duplicate, and raising it could break a constraint such as whole 128-token groups).
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
    return dataclasses.replace(draft, workloads=gpu, cpu_workloads=[dict(w) for w in draft.workloads])


def _key(workload: dict[str, int]) -> tuple:
    return tuple(sorted(workload.items()))


def zipped(**axes: Iterable[int]) -> list[dict[str, int]]:
    """Workloads that zip the given sequences (of one length), not their product."""
    columns = {name: list(values) for name, values in axes.items()}
    if len({len(v) for v in columns.values()}) != 1:
        raise ValueError(f"zipped: sequences of different lengths {[len(v) for v in columns.values()]}")
    return [dict(zip(columns, row)) for row in zip(*columns.values())]
