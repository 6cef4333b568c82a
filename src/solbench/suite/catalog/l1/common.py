"""Shared pieces of the L1 recipes: which config values a problem cites, and axis / tensor specs (drafts come
from `catalog.builder.problem`).

CPU budget (the suite runs through the evaluator on a 2-core CPU in CI): at the largest workload a
reference call takes about 0.3 s or less, its float64 golden run about 1 s or less, and the inputs
stay under about 200 MB; the smallest workload is cheap. Sweeps below are chosen to fit it.
"""

from __future__ import annotations

from dataclasses import replace

from solbench.suite.draft import ModelRef


def uses(m: ModelRef, *keys: str) -> ModelRef:
    """The model with only the config values this problem uses (they become its ``config:`` tags)."""
    missing = [k for k in keys if k not in m.config]
    if missing:
        raise KeyError(f"{m.name}: no config value {missing[0]!r} recorded in the catalog")
    return replace(m, config={k: m.config[k] for k in keys})


def var(description: str) -> dict:
    return {"type": "var", "description": description}


def const(value: int, description: str) -> dict:
    return {"type": "const", "value": value, "description": description}


def expr(expression: str, description: str) -> dict:
    return {"type": "expr", "expression": expression, "description": description}


def tensor(shape, dtype: str, description: str | None = None) -> dict:
    spec = {"shape": list(shape), "dtype": dtype}
    if description:
        spec["description"] = description
    return spec


def scalar(dtype: str = "float32") -> dict:
    return {"shape": None, "dtype": dtype}


def per(axis: str, values) -> list[dict[str, int]]:
    return [{axis: v} for v in values]


def pairs(first: str, second: str, values) -> list[dict[str, int]]:
    return [{first: a, second: b} for a, b in values]
