"""Workload reach: how much of a real model's step time suite kernels can move (`solbench reach`, docs/reach.md).

Profiles a model's steady-state steps, splits their time into vendor-tuned classes (GEMM, convolution,
attention, collectives) and addressable ops, maps the addressable time onto suite problems and projects
the end-to-end gain of per-problem speedups. Importing this package does not import torch.
"""

from solbench.reach.errors import ReachError
from solbench.reach.models import ModelRequest
from solbench.reach.report import ReachReport
from solbench.reach.rules import DEFAULT_RULES, Rules
from solbench.reach.workflow import ReachOptions, read_report, run_reach, write_report

__all__ = [
    "DEFAULT_RULES",
    "ModelRequest",
    "ReachError",
    "ReachOptions",
    "ReachReport",
    "Rules",
    "read_report",
    "run_reach",
    "write_report",
]
