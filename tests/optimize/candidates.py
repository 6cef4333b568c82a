"""A tiny problem and the candidates a scripted agent tries on it, shared by the optimize tests."""

from __future__ import annotations

from pathlib import Path

from conftest import VECTOR_ADD, write_problem
from solbench.scoring import Baseline, save_baselines

HELD_OUT = "h-7777"
"""A held-out workload whose uuid and size (N=7777) must never show before finalize."""

SLOW = "import time\n\ndef run(x, y):\n    time.sleep(0.02)\n    return x + y\n"
FAST = "import torch\n\ndef run(x, y):\n    return torch.add(x, y)\n"
CHEAT = "import torch\n\ndef run(x, y):\n    return x.add_(y)\n"
"""Faster still (no allocation), but it writes into an input: the evaluator calls that REWARD_HACK."""
BROKEN = "def run(x, y)\n    return x + y\n"


def vector_add(root: Path, *sizes: int, held_out: bool = False) -> Path:
    workloads = [
        {"uuid": f"n{n}", "axes": {"N": n}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}} for n in sizes
    ]
    if held_out:
        workloads.append(
            {"uuid": HELD_OUT, "axes": {"N": 7777}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}}
        )
    return write_problem(root, VECTOR_ADD, workloads)


def baselines_file(path: Path, hardware: str, *uuids: str, latency_ms: float = 0.05) -> Path:
    """A baselines file with T_b for `uuids`, so an environment need not time the reference."""
    save_baselines(
        path,
        [
            Baseline(definition="vector_add", workload=uuid, hardware=hardware, latency_ms=latency_ms, source="test")
            for uuid in uuids
        ],
        created="2026-12-01",
        harness_version="test",
    )
    return path
