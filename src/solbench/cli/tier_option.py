"""The `--tier gpu|cpu|all` option shared by the commands that choose a problem's workloads."""

from __future__ import annotations

from enum import Enum

import typer


class TierChoice(str, Enum):
    """spec.tiers.TIERS: the published workloads, the CPU tier, or both."""

    gpu = "gpu"
    cpu = "cpu"
    all = "all"


TIER_HELP = (
    "Workloads: gpu (workload.jsonl, upstream scale), cpu (workload.cpu.jsonl) or all; default: the CPU "
    "tier when evaluating on the CPU and the problem has one, else gpu."
)


def tier_option(help_text: str = TIER_HELP):
    return typer.Option(None, "--tier", help=help_text)


def tier_value(choice: TierChoice | None) -> str | None:
    return choice.value if choice is not None else None
