"""A captured, generated module -> a `ProblemDraft` (``origin="extract"``) -> a problem folder.

The reference is the generated program plus a ``make_inputs`` generator that draws weights like a
trained layer's (``randn / sqrt(fan_in)`` for [out, in] matrices and stacked experts, ``gain + 0.1 randn`` for
norm gains and biases), so attention scores, activations and routing stay in a realistic range.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solbench.suite.draft import ModelRef, ProblemDraft, write_problem
from solbench.suite.extract.codegen import Generated
from solbench.suite.extract.errors import ExtractError
from solbench.suite.tolerances import loosest, tolerance_for


@dataclass
class AxisNamer:
    """Const dims -> axis names, from the configuration values that produce them."""

    candidates: list[tuple[str, int, str]]
    """(name, value, description), first match wins."""

    def name_for(self, size: int, axes: dict[str, dict[str, Any]]) -> str:
        for name, value, description in self.candidates:
            if value == size:
                axes.setdefault(name, {"type": "const", "value": size, "description": description})
                return name
        name = f"dim_{size}"
        axes.setdefault(name, {"type": "const", "value": size, "description": "fixed size of the captured module"})
        return name


def build_draft(
    generated: Generated,
    *,
    model: ModelRef,
    set_name: str,
    name: str,
    op_type: str,
    description: str,
    namer: AxisNamer,
    var_axes: dict[str, str],
    workloads: list[dict[str, int]],
    backward: bool,
    dtype_name: str,
    extra_tags: list[str] | None = None,
    frozen: frozenset[str] = frozenset(),
    zero_grads: frozenset[str] = frozenset(),
) -> ProblemDraft:
    """``var_axes``: symbol text of the activation's dynamic dims (``s77``) -> axis name.

    ``frozen`` weights are ones no output depends on (a key bias under softmax; in a backward problem
    also a bias right before the output, which no gradient depends on); they are not inputs, the
    reference holds them at zero. ``zero_grads`` (backward) are gradients that are identically zero;
    they are not outputs.
    """
    import torch

    axes: dict[str, dict[str, Any]] = {}
    for axis in var_axes.values():
        axes[axis] = {"type": "var", "description": _VAR_DESCRIPTIONS.get(axis, axis)}

    def shape_of(shape) -> list[str]:
        names = []
        for size in shape:
            if isinstance(size, torch.SymInt):
                text = str(size)
                if text not in var_axes:
                    raise ExtractError(f"a shape depends on {text}, which is not one of the swept axes")
                names.append(var_axes[text])
            else:
                names.append(namer.name_for(int(size), axes))
        return names

    inputs: dict[str, dict[str, Any]] = {}
    makers: list[str] = []
    for argument in generated.arguments:
        shape = shape_of(argument.value.shape)
        if argument.name in frozen:
            continue
        dtype = str(argument.value.dtype).removeprefix("torch.")
        inputs[argument.name] = {"shape": shape, "dtype": dtype}
        makers.append(_maker(argument.name, argument.role, argument.value, shape, dtype))
    if not all(o.is_floating_point() for o in generated.outputs):
        raise ExtractError("the module returns a non-floating output; extract writes floating-point problems only")
    outputs: dict[str, dict[str, Any]] = {}
    if backward:
        if len(generated.outputs) != 1:
            raise ExtractError("--backward needs a module with exactly one output")
        output = generated.outputs[0]
        grad_shape = shape_of(output.shape)
        grad_dtype = str(output.dtype).removeprefix("torch.")
        inputs["grad_output"] = {"shape": grad_shape, "dtype": grad_dtype}
        makers.append(_maker("grad_output", "activation", output, grad_shape, grad_dtype))
        for argument in generated.arguments:
            if argument.name not in zero_grads:
                dtype = str(argument.value.dtype).removeprefix("torch.")
                outputs[f"grad_{argument.name}"] = {"shape": shape_of(argument.value.shape), "dtype": dtype}
    else:
        for index, output in enumerate(generated.outputs):
            key = "output" if len(generated.outputs) == 1 else f"output_{index}"
            outputs[key] = {"shape": shape_of(output.shape), "dtype": str(output.dtype).removeprefix("torch.")}
    reference = reference_source(generated, makers, backward, frozen, zero_grads)
    return ProblemDraft(
        set=set_name,
        name=name,
        op_type=op_type,
        description=description,
        model=model,
        axes=axes,
        inputs=inputs,
        outputs=outputs,
        reference=reference,
        workloads=workloads,
        tolerance=tolerance_for(loosest(o["dtype"] for o in outputs.values())),
        backward=backward,
        custom_inputs_entrypoint="make_inputs",
        origin="extract",
        extra_tags=list(extra_tags or []),
    )


_VAR_DESCRIPTIONS = {
    "num_tokens": "Tokens in the batch (batch x sequence, flattened)",
    "batch_size": "Sequences in the batch",
    "seq_len": "Tokens per sequence (prefill, causal)",
}


def _maker(name: str, role: str, value, shape: list[str], dtype: str) -> str:
    sizes = ", ".join(f'a["{axis}"]' for axis in shape)
    draw = f"torch.randn({sizes}, device=device)"
    if role == "weight":
        if value.dim() >= 2:
            fan_in = value.shape[-1]  # [out, in] or stacked experts [E, out, in]
            draw = f"{draw} * {fan_in**-0.5!r}"
        else:
            centre = _centre(value)
            draw = f"{centre!r} + 0.1 * {draw}" if centre else f"0.1 * {draw}"
    return f'        "{name}": ({draw}).to(torch.{dtype}),'


def _centre(value) -> float:
    """The value a 1-D parameter is drawn around (1 for a norm gain, 0 for a bias or a (1 + w) gain)."""
    mean = float(value.float().mean())
    return float(round(mean))


def reference_source(
    generated: Generated,
    makers: list[str],
    backward: bool,
    frozen: frozenset[str] = frozenset(),
    zero_grads: frozenset[str] = frozenset(),
) -> str:
    names = [a.name for a in generated.arguments]
    parts = ["import math\n" if "math." in generated.body else "", "import torch\n\n"]
    if generated.constants:
        parts.append(generated.constants + "\n\n")
    parts.append(
        "\ndef make_inputs(axes_and_scalars, device):\n    a = axes_and_scalars\n    return {\n"
        + "\n".join(makers)
        + "\n    }\n\n\n"
    )
    signature = ", ".join(names)
    first = names[0]
    zeros = [
        f"    {a.name} = torch.zeros({tuple(a.value.shape)!r}, dtype={first}.dtype, device={first}.device)"
        f"  # {'no gradient depends' if backward else 'the output does not depend'} on it"
        for a in generated.arguments
        if a.name in frozen
    ]
    if not backward:
        given = ", ".join(n for n in names if n not in frozen)
        body = "\n".join(zeros + [generated.body])
        parts.append(f"@torch.no_grad()\ndef run({given}):\n{body}\n")
    else:
        parts.append(f"def _forward({signature}):\n{generated.body}\n\n\n")
        given = ", ".join(n for n in names if n not in frozen)
        lines = [f"def run({given}, grad_output):"] + zeros
        wanted = [i for i, n in enumerate(names) if n not in zero_grads]
        lines += [
            "    with torch.enable_grad():",
            f"        leaves = [t.detach().requires_grad_() for t in ({signature},)]",
            "        output = _forward(*leaves)",
        ]
        if len(wanted) == len(names):
            lines.append("        return tuple(torch.autograd.grad(output, leaves, grad_output))")
        else:
            lines.append(f"        wanted = [leaves[i] for i in {wanted!r}]  # the others' gradients are zero")
            lines.append("        return tuple(torch.autograd.grad(output, wanted, grad_output))")
        parts.append("\n".join(lines) + "\n")
    return "".join(parts)


def write(draft: ProblemDraft, root: Path) -> Path:
    return write_problem(draft, root)
