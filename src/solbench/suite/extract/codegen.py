"""Turn an exported graph into standalone Python over ``torch.ops.aten`` (no transformers import).

Placeholders become readable inputs (``hidden_states``, ``q_proj_weight`` ...). Small non-persistent
buffers and lifted constants (the rotary ``inv_freq``) become literal lists in the source; a large
one is refused rather than embedded. Devices become the input's device, and dtypes are written
relative to the activation's dtype (``_dtype``; fp32 accumulation as ``_acc``, which is fp64 when
the evaluator runs the reference on float64 copies for its golden result).
"""

from __future__ import annotations

import keyword
import math
import operator
import re
from dataclasses import dataclass, field
from typing import Any

from solbench.suite.extract.errors import ExtractError

MAX_EMBEDDED_ELEMENTS = 4096
"""Largest buffer written into the source as a literal."""

_DROPPED = {
    "aten._assert_tensor_metadata.default",
    "aten._assert_scalar.default",
    "aten.sym_constrain_range_for_size.default",
    "aten.sym_constrain_range.default",
    "aten._assert_async.msg",
    "aten._assert_async.default",
}
_INFIX = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.floordiv: "//",
    operator.truediv: "/",
    operator.mod: "%",
    operator.pow: "**",
    operator.eq: "==",
    operator.ne: "!=",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
}
_RESERVED = {"torch", "math", "run", "make_inputs", "_forward", "_device", "_dtype", "_acc", "leaves", "output"}


@dataclass
class Argument:
    name: str
    role: str
    """'activation' (the user input), 'weight' (parameter or persistent buffer)."""
    value: Any
    """The example tensor (fake for the activation's shape, real for weights)."""
    target: str = ""


@dataclass
class Generated:
    arguments: list[Argument]
    outputs: list[Any]
    """Fake tensors of the outputs (shapes may hold SymInts)."""
    constants: str
    body: str
    """Lines of the function body (indented 4), ending with ``return``."""
    notes: list[str] = field(default_factory=list)


def identifier(text: str) -> str:
    name = re.sub(r"\W+", "_", text).strip("_").lower() or "value"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = f"v_{name}"
    return name


def generate(program, activation_name: str = "hidden_states", strip_prefix: str = "module.") -> Generated:
    import torch

    graph = program.graph
    specs = {s.arg.name: s for s in program.graph_signature.input_specs if hasattr(s.arg, "name")}
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    names: dict[Any, str] = {}
    taken = set(_RESERVED)
    arguments: list[Argument] = []
    weights: list[Argument] = []
    constant_lines: list[str] = []
    constant_loads: list[str] = []
    notes: list[str] = []
    compute_dtype = None

    def unique(base: str) -> str:
        name, i = base, 1
        while name in taken:
            i += 1
            name = f"{base}_{i}"
        taken.add(name)
        return name

    for node in placeholders:
        spec = specs[node.name]
        kind = spec.kind.name
        target = spec.target or ""
        short = target[len(strip_prefix) :] if target.startswith(strip_prefix) else target
        if kind == "USER_INPUT":
            names[node] = unique(activation_name)
            compute_dtype = node.meta["val"].dtype
            arguments.append(Argument(names[node], "activation", node.meta["val"]))
            continue
        if not node.users:
            continue
        if kind == "PARAMETER" or (kind == "BUFFER" and spec.persistent):
            value = program.state_dict[target]
            names[node] = unique(identifier(short))
            weights.append(Argument(names[node], "weight", value.detach(), target))
        elif kind in ("BUFFER", "CONSTANT_TENSOR"):
            value = program.constants[target] if target in program.constants else program.state_dict[target]
            if value.numel() > MAX_EMBEDDED_ELEMENTS:
                raise ExtractError(
                    f"buffer {short!r} has {value.numel()} elements; solbench extract embeds "
                    f"constants of at most {MAX_EMBEDDED_ELEMENTS} in the reference source and will "
                    "not write a larger one"
                )
            names[node] = unique(identifier(short))
            literal = f"_{names[node].upper()}"
            constant_lines.append(f"{literal} = {_literal_list(value)}")
            constant_loads.append(f"    {names[node]} = torch.tensor({literal}, dtype={value.dtype}, device=_device)")
            notes.append(f"{short} ({tuple(value.shape)}, {value.dtype}) embedded as a literal")
        else:
            raise ExtractError(f"unsupported exported input kind {kind} ({target})")
    if compute_dtype is None:
        raise ExtractError("the exported program has no user input")
    arguments += weights
    low_precision = compute_dtype in (torch.bfloat16, torch.float16)

    def dtype_text(dtype) -> str:
        if dtype == compute_dtype:
            return "_dtype"
        if dtype == torch.float32 and low_precision:
            return "_acc"
        return str(dtype)

    def render(value) -> str:
        if isinstance(value, torch.fx.Node):
            if value not in names:
                raise ExtractError(f"graph value {value.name} used before it is defined")
            return names[value]
        if isinstance(value, list):
            return "[" + ", ".join(render(v) for v in value) + "]"
        if isinstance(value, tuple):
            return "(" + "".join(render(v) + ", " for v in value) + ")"
        if isinstance(value, torch.dtype):
            return dtype_text(value)
        if isinstance(value, torch.device):
            return "_device"
        if isinstance(value, (torch.layout, torch.memory_format)):
            return str(value)
        if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
            return repr(value)
        if isinstance(value, float):
            if math.isinf(value):
                return "float('inf')" if value > 0 else "float('-inf')"
            if math.isnan(value):
                return "float('nan')"
            return repr(value)
        raise ExtractError(f"cannot write a constant of type {type(value).__name__} into the reference")

    first = arguments[0].name
    body = list(constant_loads)
    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            outputs = node.args[0]
            outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
            rendered = [render(o) for o in outputs]
            body.append(f"    return {rendered[0]}" if len(rendered) == 1 else f"    return {', '.join(rendered)}")
            output_values = [o.meta["val"] for o in outputs]
            continue
        if node.op != "call_function":
            raise ExtractError(
                f"the exported graph holds a {node.op} node ({node.target}); only plain ATen "
                "calls can be written out (control flow or a submodule was captured)"
            )
        expression = _call(node, render)
        if expression is None:
            continue
        names[node] = unique(identifier(node.name))
        body.append(f"    {names[node]} = {expression}")
    prelude = [
        f"    _device = {first}.device",
        f"    _dtype = {first}.dtype",
        "    _acc = torch.float64 if _dtype == torch.float64 else torch.float32",
    ]
    text = "\n".join(body)
    used = [line for line in prelude if re.search(rf"\b{line.split()[0]}\b", text)]
    if any("_acc" in line for line in used) and not any(line.split()[0] == "_dtype" for line in used):
        used.insert(-1, prelude[1])
    return Generated(arguments, output_values, "\n".join(constant_lines), "\n".join(used + body), notes)


def _call(node, render) -> str | None:
    import torch

    target = node.target
    args = [render(a) for a in node.args]
    kwargs = [f"{k}={render(v)}" for k, v in node.kwargs.items()]
    if isinstance(target, torch._ops.OpOverload):
        qualified = str(target)
        if qualified in _DROPPED:
            return None
        if qualified == "aten.sym_size.int":
            return f"{args[0]}.shape[{args[1]}]"
        if qualified == "aten.sym_numel.default":
            return f"{args[0]}.numel()"
        return f"torch.ops.{qualified}({', '.join(args + kwargs)})"
    if isinstance(target, torch._ops.HigherOrderOperator):
        raise ExtractError(
            f"the exported graph uses the higher-order op {target.name()}; it cannot be written as plain ATen calls"
        )
    if target is operator.getitem:
        return f"{args[0]}[{args[1]}]"
    if target in _INFIX:
        return f"{args[0]} {_INFIX[target]} {args[1]}"
    if target is operator.neg:
        return f"-{args[0]}"
    if target is torch._C._set_grad_enabled:
        return None
    module = getattr(target, "__module__", "") or ""
    if module.startswith("torch") and getattr(torch, getattr(target, "__name__", ""), None) is target:
        if target.__name__.startswith("_check"):
            return None
        return f"torch.{target.__name__}({', '.join(args + kwargs)})"
    if module == "math" or getattr(math, getattr(target, "__name__", ""), None) is target:
        return f"math.{target.__name__}({', '.join(args)})"
    raise ExtractError(f"cannot write the call {getattr(target, '__name__', target)!r} into the reference")


def _literal_list(tensor) -> str:
    values = tensor.detach().cpu()
    if values.is_floating_point():
        values = values.double()
    return repr(values.tolist())
