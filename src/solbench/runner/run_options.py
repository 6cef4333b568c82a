"""A suite run's and a baseline measurement's options, checked before anything slow (probing, workers, sandboxes)."""

from __future__ import annotations

from dataclasses import replace

from solbench.evaluation.config import EvaluationConfig, check_device_available
from solbench.runner.errors import RunOptionError
from solbench.spec.tiers import TIERS


def checked_config(config: EvaluationConfig | None, **fixed) -> EvaluationConfig:
    """`config` (default: `EvaluationConfig()`, the CLI's defaults too) with `fixed` applied and its device resolved
    and present on this machine (else HarnessOptionError)."""
    config = replace(config or EvaluationConfig(), **fixed).resolved()
    check_device_available(config.device)
    return config


def check_counts(*, workers: int, limit: int | None) -> None:
    """Worker processes and the problem limit are whole numbers, at least 1 (a limit may be None: every problem)."""
    for option, value in (("workers", workers), ("limit", limit)):
        if option == "limit" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise RunOptionError(option, f"{value!r}: must be a whole number, at least 1")


def check_tier(tier: str | None) -> None:
    if tier is not None and tier not in TIERS:
        raise RunOptionError("tier", f"unknown tier {tier!r} (known: {', '.join(TIERS)})")
