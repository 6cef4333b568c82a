"""Capture a module as an ATen graph with torch.export: token/sequence dims dynamic, weights lifted to inputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solbench.suite.extract.errors import ExtractError

LAYOUT_AXES = {"tokens": ("num_tokens", None), "sequence": ("batch_size", "seq_len", None)}
"""Variable axes of the activation ``hidden_states`` per layout (None: the static hidden dim)."""


@dataclass
class Captured:
    program: Any
    """torch.export.ExportedProgram."""
    example: Any
    """The example activation it was traced with."""
    var_axes: dict[int, str]
    """Dim of ``hidden_states`` -> var axis name."""


def example_activation(layout: str, hidden: int, dtype):
    import torch

    shape = (13, hidden) if layout == "tokens" else (2, 11, hidden)
    return torch.randn(shape, generator=torch.Generator().manual_seed(1)).to(dtype)


def capture(module, layout: str, hidden: int, dtype) -> Captured:
    import torch
    from torch.export import Dim

    example = example_activation(layout, hidden, dtype)
    names = LAYOUT_AXES[layout]
    var_axes = {dim: name for dim, name in enumerate(names) if name}
    # min 2: torch.export specialises sizes 0 and 1; the program it yields still serves them.
    dims = {dim: Dim(name, min=1 if name == "batch_size" else 2, max=1 << 20) for dim, name in var_axes.items()}
    try:
        program = torch.export.export(module, (example,), dynamic_shapes=(dims,), strict=False)
    except Exception as error:  # torch.export raises many types; all mean "cannot capture"
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if "data-dependent" in str(error) or "GuardOnDataDependent" in type(error).__name__:
            text = "data-dependent control flow (e.g. a loop over the experts that tokens were routed to): " + text
        raise ExtractError(f"torch.export could not capture the module: {text[:300]}") from None
    _check_dynamic(program, var_axes)
    return Captured(program, example, var_axes)


def _check_dynamic(program, var_axes: dict[int, str]) -> None:
    """Every variable dim must have stayed symbolic (a module that specialised on it cannot be swept)."""
    import torch

    specs = program.graph_signature.input_specs
    user = [s for s in specs if s.kind.name == "USER_INPUT"]
    node = next(n for n in program.graph.nodes if n.op == "placeholder" and n.name == user[0].arg.name)
    value = node.meta["val"]
    for dim, name in var_axes.items():
        if not isinstance(value.shape[dim], torch.SymInt):
            raise ExtractError(f"the module specialised on {name} (dim {dim}); it cannot be swept over that axis")
