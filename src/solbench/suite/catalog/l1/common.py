"""Shared pieces of the L1 recipes: which config values a problem cites, names, and the draft constructor.

CPU budget (the suite runs through the evaluator on a 2-core CPU in CI): at the largest workload a
reference call takes about 0.3 s or less, its float64 golden run about 1 s or less, and the inputs
stay under about 200 MB; the smallest workload is cheap. Sweeps below are chosen to fit it.
"""

from __future__ import annotations

from dataclasses import replace

from solbench.suite.draft import ModelRef, ProblemDraft
from solbench.suite.naming import model_slug
from solbench.suite.tolerances import tolerance_for

_PRECISION_ORDER = ("float8_e5m2", "float8_e4m3fn", "bfloat16", "float16", "float32", "float64")


def uses(m: ModelRef, *keys: str) -> ModelRef:
    """The model with only the config values this problem uses (they become its ``config:`` tags)."""
    missing = [k for k in keys if k not in m.config]
    if missing:
        raise KeyError(f"{m.name}: no config value {missing[0]!r} recorded in the catalog")
    return replace(m, config={k: m.config[k] for k in keys})


def slug(m: ModelRef) -> str:
    """The model's part of a problem name (suite.naming): ``Llama-3.1-8B`` -> ``llama-3-1-8b``."""
    return model_slug(m.name)


def loosest(dtypes) -> str:
    """The least precise floating dtype among outputs (integer outputs alone: exact)."""
    floating = [d for d in dtypes if d in _PRECISION_ORDER]
    return min(floating, key=_PRECISION_ORDER.index) if floating else next(iter(dtypes))


def l1(m: ModelRef, name: str, op_type: str, description: str, *, axes, inputs, outputs, reference: str,
       workloads, scalars=None, backward: bool = False, custom: str | None = None,
       matched_ratio: float = 0.99, atol: float | None = None) -> ProblemDraft:
    """``atol`` overrides the dtype's absolute tolerance for outputs whose values are far below it
    (probabilities over a vocabulary): there all-zero outputs would otherwise pass."""
    if len(workloads) < 8 or len({tuple(sorted(w.items())) for w in workloads}) != len(workloads):
        raise ValueError(f"{name}: needs at least 8 distinct workloads")
    dtype = loosest([spec["dtype"] for spec in outputs.values()])
    tolerance = tolerance_for(dtype, matched_ratio=matched_ratio)
    if atol is not None:
        tolerance["max_atol"] = atol
    return ProblemDraft(set="L1", name=name, op_type=op_type, model=m, description=description, axes=axes,
                        inputs=inputs, outputs=outputs, reference=reference, workloads=list(workloads),
                        scalars=dict(scalars or {}), backward=backward, custom_inputs_entrypoint=custom,
                        tolerance=tolerance)


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
