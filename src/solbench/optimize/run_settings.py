"""The settings of one optimisation run, and how they are kept in its journal so replay can rebuild the env."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solbench.evaluation.config import EvaluationConfig
from solbench.sandbox.measure import TimingPlan

DEFAULT_ROUNDS = 5
DEFAULT_CANDIDATES = 4
DEFAULT_AGENT_TIMEOUT_S = 1800.0
DEFAULT_TEST_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class OptimizeSettings:
    """One `solbench optimize` run. The library default and the CLI's are these."""

    problem: Path
    agent: str
    """A shell command run in each round folder, or builtin:reference / builtin:compile."""
    workspace: Path
    rounds: int = DEFAULT_ROUNDS
    candidates: int = DEFAULT_CANDIDATES
    """At most this many candidates of a round are evaluated (the rest are journaled as not evaluated)."""
    budget_evals: int | None = None
    """Evaluations the whole run may spend (cache hits are free); None: unlimited."""
    budget_tests: int | None = None
    """`solbench test` calls the whole run may spend; None: unlimited."""
    agent_timeout_s: float = DEFAULT_AGENT_TIMEOUT_S
    resume: bool = False
    hardware: str = "local"
    """T_SOL (and so the reward) is computed on this hardware."""
    config: EvaluationConfig | None = None
    """How candidates are evaluated; None: EvaluationConfig's defaults."""
    cache: Path | None = None
    """A result cache folder: an identical candidate is answered from it, free of budget."""
    memory: Path | None = None
    """The strategy memory file; None: DIR/memory.jsonl."""
    held_out: list[str] | float | None = None
    """Held-out workloads (uuids or a fraction); None: the env's default split."""
    baselines: Path | None = None
    """A baselines file (T_b per workload); None: the env times the reference once."""


def config_to_json(config: EvaluationConfig | None) -> dict[str, Any] | None:
    if config is None:
        return None
    values = dataclasses.asdict(config)
    values["data_roots"] = [str(root) for root in config.data_roots]
    return values


def config_from_json(values: dict[str, Any] | None) -> EvaluationConfig | None:
    if values is None:
        return None
    values = dict(values)
    values["timing"] = TimingPlan(**values["timing"])
    values["data_roots"] = tuple(Path(root) for root in values.get("data_roots", ()))
    return EvaluationConfig(**values)


def settings_to_json(settings: OptimizeSettings) -> dict[str, Any]:
    """What replay and resume need beyond the run record's own fields."""
    return {
        "hardware": settings.hardware,
        "config": config_to_json(settings.config),
        "cache": str(settings.cache) if settings.cache else None,
        "memory": str(settings.memory) if settings.memory else None,
        "held_out": settings.held_out,
        "budget_tests": settings.budget_tests,
        "baselines": str(Path(settings.baselines).resolve()) if settings.baselines else None,
    }
