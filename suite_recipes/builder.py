"""The one way a recipe makes a problem: `problem(...)` returns the `ProblemDraft` that `scripts/build-suite`
writes (docs/suite.md, "How to add a problem").

Every recipe module calls it, so every problem gets the same defaults:

- **tags**: ``set:``, ``model:``, ``hf:``, ``domain:``, ``pass:``, ``origin:recipe`` and the ``config:`` values
  of the `ModelRef` (give only the values the problem uses: `uses`), then `tags`
  (``family:``, ``kernel:`` ...);
- **name**: the proposed name rewritten by the one naming rule (`suite.naming.problem_name`, applied by the
  draft), so ``llama31_8b_rope`` and ``llama-3-1-8b_rope`` give the same folder;
- **tolerance**: `suite.tolerances.tolerance_for` of the least precise output dtype, unless the recipe
  gives one (quantizers, exact outputs);
- **tiers** (docs/tiers.md): `workloads` are the recipe's small sizes. With `gpu`, `sweeps.tiered` makes
  `gpu` the GPU tier (``workload.jsonl``) and keeps `workloads` as the CPU tier (``workload.cpu.jsonl``), with
  its checks (at least 16 distinct GPU workloads on the same axes, none over 16 GB). Without it the recipe
  calls `sweeps.tiered` (or `with_gpu_tier`) on the draft itself once it knows its GPU sizes;
- **checks**: at least 8 distinct recipe workloads (none: the recipe sets both tiers afterwards, through
  `sweeps.tiered`).

The definition's fields are spelled with `var`, `const`, `expr` (axes), `tensor` and `scalar` (inputs and
outputs), as written to definition.json; the reference is a template rendered by `suite_recipes.template.render`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from solbench.suite.draft import ModelRef, ProblemDraft
from solbench.suite.naming import model_slug
from solbench.suite.tolerances import loosest, tolerance_for
from suite_recipes.sweeps import tiered, workload_key

MIN_WORKLOADS = 8
"""Distinct recipe (CPU-tier) workloads every problem has."""


def uses(m: ModelRef, *keys: str) -> ModelRef:
    """The model with only the config values this problem uses (they become its ``config:`` tags)."""
    missing = [k for k in keys if k not in m.config]
    if missing:
        raise KeyError(f"{m.name}: no config value {missing[0]!r} recorded in the recipe's model")
    return replace(m, config={k: m.config[k] for k in keys})


# --- the definition's fields -------------------------------------------------------------------------------


def var(description: str) -> dict:
    """A ``var`` axis: set per workload."""
    return {"type": "var", "description": description}


def const(value: int, description: str) -> dict:
    """A ``const`` axis: the model's published size (or a shard of it)."""
    return {"type": "const", "value": int(value), "description": description}


def expr(expression: str, description: str | None = None) -> dict:
    """An ``expr`` axis: computed from the others (``num_tokens * top_k``)."""
    axis = {"type": "expr", "expression": expression}
    if description:
        axis["description"] = description
    return axis


def tensor(shape: Sequence[str] | None, dtype: str, description: str | None = None) -> dict:
    """An input or output: its shape in axis names (None: a scalar), dtype and what it holds."""
    spec: dict[str, Any] = {"shape": list(shape) if shape is not None else None, "dtype": dtype}
    if description:
        spec["description"] = description
    return spec


def scalar(dtype: str = "float32") -> dict:
    """A scalar input (``shape: null``): its value is the draft's ``scalars[name]``."""
    return {"shape": None, "dtype": dtype}


def slug(m: ModelRef) -> str:
    """The model's part of a problem name (`suite.naming`): ``Llama-3.1-8B`` -> ``llama-3-1-8b``."""
    return model_slug(m.name)


def problem(
    set: str,
    model: ModelRef,
    name: str,
    op_type: str,
    description: str,
    *,
    axes: dict[str, dict[str, Any]],
    inputs: dict[str, dict[str, Any]],
    outputs: dict[str, dict[str, Any]],
    reference: str,
    workloads: Iterable[dict[str, int]],
    gpu: Iterable[dict[str, int]] | None = None,
    tolerance: dict[str, Any] | None = None,
    matched_ratio: float = 0.99,
    atol: float | None = None,
    backward: bool = False,
    scalars: dict[str, Any] | None = None,
    custom_inputs_entrypoint: str | None = None,
    constraints: Iterable[str] = (),
    tags: Iterable[str] = (),
) -> ProblemDraft:
    """One problem of the suite (see the module docstring for the defaults).

    `axes`, `inputs` and `outputs` are the definition's fields as written to definition.json; `reference` is
    the whole reference source (``run`` and, with `custom_inputs_entrypoint`, its input generator).
    `tolerance` replaces the dtype default; otherwise `matched_ratio` sets the share of elements that must
    match and `atol` overrides the absolute tolerance (outputs far below it, such as probabilities over a
    vocabulary, where all zeros would pass). `scalars` are the values of scalar inputs (``shape: null``)."""
    workloads = [dict(w) for w in workloads]
    if len({workload_key(w) for w in workloads}) != len(workloads):
        raise ValueError(f"{name}: a workload is listed twice")
    if 0 < len(workloads) < MIN_WORKLOADS:
        raise ValueError(f"{name}: {len(workloads)} workloads, needs at least {MIN_WORKLOADS} distinct ones")
    if tolerance is None:
        tolerance = tolerance_for(loosest(spec["dtype"] for spec in outputs.values()), matched_ratio=matched_ratio)
        if atol is not None:
            tolerance["max_atol"] = atol
    draft = ProblemDraft(
        set=set,
        name=name,
        op_type=op_type,
        description=description,
        model=model,
        axes=axes,
        inputs=inputs,
        outputs=outputs,
        reference=reference,
        workloads=workloads,
        tolerance=tolerance,
        backward=backward,
        scalars=dict(scalars or {}),
        custom_inputs_entrypoint=custom_inputs_entrypoint,
        constraints=list(constraints),
        extra_tags=list(tags),
    )
    return draft if gpu is None else tiered(draft, gpu, shift="none")
