"""Gated MLP activations (SwiGLU, GeGLU) on the gate and up projections."""

from __future__ import annotations

from suite_recipes.builder import const, problem, slug, tensor, uses, var
from suite_recipes.shapes import TOKEN_SWEEP
from suite_recipes.sweeps import per
from suite_recipes.template import render

_GATED_ACTIVATIONS = {
    "silu": ("F.silu(gate)", "SwiGLU: silu(gate) * up"),
    "gelu_pytorch_tanh": ('F.gelu(gate, approximate="tanh")', "GeGLU: gelu_tanh(gate) * up"),
}


CAPPED_TOKENS = (1, 7, 32, 128, 255, 512, 777, 1024)
"""Token counts for ops whose rows are very wide (intermediate sizes above 10k)."""


def gated_activation(m, *, tp: int = 1, tokens=TOKEN_SWEEP):
    m = uses(m, "intermediate_size", "hidden_act", "torch_dtype")
    act, dtype = m.config["hidden_act"], m.config["torch_dtype"]
    code, what = _GATED_ACTIVATIONS[act]
    width = m.config["intermediate_size"] // tp
    shard = (
        f" per GPU at tensor parallelism {tp} (intermediate_size {m.config['intermediate_size']} / {tp})"
        if tp > 1
        else " (intermediate_size)"
    )
    op = "swiglu" if act == "silu" else "geglu"
    return problem(
        "L1",
        m,
        f"{slug(m)}_{op}_i{width}",
        op,
        f"{m.name} MLP activation {what} (hidden_act {act}) on the gate and up projections, "
        f"width {width}{shard}, {dtype} (torch_dtype).",
        axes={"num_tokens": var("Tokens in the batch"), "width": const(width, "intermediate width")},
        inputs={"gate": tensor(["num_tokens", "width"], dtype), "up": tensor(["num_tokens", "width"], dtype)},
        outputs={"output": tensor(["num_tokens", "width"], dtype)},
        reference=render("l1/gated_activation.py", ACTIVATION=code),
        workloads=per("num_tokens", tokens),
    )
