"""Linear layers (the projections of attention and MLP blocks) at their published widths."""

from __future__ import annotations

from suite_recipes.builder import const, problem, slug, tensor, uses, var
from suite_recipes.shapes import SMALL_TOKEN_SWEEP
from suite_recipes.sweeps import per
from suite_recipes.template import render


def linear(
    m,
    *,
    what: str,
    keys,
    in_features: int,
    out_features: int,
    formula: str,
    bias: bool,
    dtype: str,
    dtype_source: str,
    rows: str = "Tokens in the batch",
    tokens=SMALL_TOKEN_SWEEP,
):
    m = uses(m, *keys, *([dtype_source] if dtype_source in m.config else []))
    arguments = "x, weight, bias" if bias else "x, weight"
    inputs = {
        "x": tensor(["num_tokens", "in_features"], dtype),
        "weight": tensor(["out_features", "in_features"], dtype),
    }
    if bias:
        inputs["bias"] = tensor(["out_features"], dtype)
    return problem(
        "L1",
        m,
        f"{slug(m)}_{what.split()[0]}_{in_features}x{out_features}",
        "gemm",
        f"{m.name} {what}: y = x W^T{' + b' if bias else ''} with in_features {in_features} and "
        f"out_features {formula}; {dtype} ({dtype_source}).",
        axes={
            "num_tokens": var(rows),
            "in_features": const(in_features, "in_features"),
            "out_features": const(out_features, formula),
        },
        inputs=inputs,
        outputs={"y": tensor(["num_tokens", "out_features"], dtype)},
        reference=render("l1/linear.py", ARGUMENTS=arguments),
        workloads=per("num_tokens", tokens),
    )
