"""The input set a statistical check draws from: a few rows of a round's inputs, each repeated along the draw axis.

One call on it gives `copies` samples of every checked row, so N samples take N / copies calls rather than N. The
repeated rows are loaded into the sandbox once; each call then sends only fresh random inputs (a CallRequest's
`fresh_inputs`), a few bytes a row, where the rows themselves (a 128k-token distribution, 0.5 MB) would make the
transfer the cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from solbench.evaluation.errors import EvaluationError
from solbench.spec.definition import Definition
from solbench.spec.distribution import DistributionCheck

DRAW_CALL_BYTES = 256 << 20
"""Input bytes of one draw call, at most (unless a single copy of the checked rows is larger): calls stay few
while the draw set stays small next to a sandbox's memory."""


class DrawSetError(EvaluationError):
    """The round's inputs cannot be repeated along the draw axis (an input made by a custom generator that is not
    a tensor of its declared shape)."""


@dataclass(frozen=True)
class DrawSet:
    inputs: list
    """One value per definition input: the checked rows repeated `copies` times along the draw axis (row j of it
    is checked row j mod len(rows)); a random input's value only gives the shape and dtype of its fresh ones."""
    axes: dict[str, int]
    """The workload's axes with the draw axis at len(rows) x copies."""
    rows: tuple[int, ...]
    """The checked rows: indexes along the draw axis of the round's inputs."""
    copies: int
    calls: int
    """Calls that give at least the declared draws per row: calls x copies of them."""
    random: tuple[int, ...]
    """Positions of the random inputs among `inputs`."""

    @property
    def draws(self) -> int:
        return self.calls * self.copies

    def fresh(self, generator) -> list[tuple[int, Any]]:
        """New uniform numbers in [0, 1) for every random input, made on the CPU: (position, tensor) pairs."""
        import torch

        return [
            (index, torch.rand(self.inputs[index].shape, generator=generator, dtype=self.inputs[index].dtype))
            for index in self.random
        ]

    def with_values(self, fresh: list[tuple[int, Any]]) -> list:
        """The inputs with `fresh`'s values in place, on the inputs' device (for the reference)."""
        values = list(self.inputs)
        for index, value in fresh:
            values[index] = value.to(self.inputs[index].device)
        return values

    def outcomes(self, outputs: list):
        """One outcome per sample: a (rows, copies, width) float64 tensor of every output's values in that row."""
        import torch

        parts = [
            torch.as_tensor(o).detach().cpu().reshape(self.copies, len(self.rows), -1).to(torch.float64)
            for o in outputs
        ]
        return torch.cat(parts, dim=-1).transpose(0, 1)


def make_draw_set(
    definition: Definition, axes: dict[str, int], inputs: list, check: DistributionCheck, generator
) -> DrawSet | None:
    """The draw set for `check` from one round's `inputs`, or None where the draw axis is empty (nothing to draw)."""
    import torch

    size = axes[check.draw_axis]
    if size == 0:
        return None
    rows = tuple(sorted(int(i) for i in torch.randperm(size, generator=generator)[: check.rows]))
    dims = [_draw_dim(definition, name, value, check.draw_axis) for name, value in zip(definition.inputs, inputs)]
    picked = [
        value if dim is None else value.index_select(dim, torch.tensor(rows, device=value.device))
        for value, dim in zip(inputs, dims)
    ]
    copy_bytes = sum(v.numel() * v.element_size() for v, d in zip(picked, dims) if d is not None)
    most = max(1, min(check.draws, DRAW_CALL_BYTES // max(copy_bytes, 1)))
    calls = math.ceil(check.draws / most)
    copies = math.ceil(check.draws / calls)
    repeated = [
        value if dim is None else value.repeat(*[copies if i == dim else 1 for i in range(value.dim())])
        for value, dim in zip(picked, dims)
    ]
    names = list(definition.inputs)
    return DrawSet(
        inputs=repeated,
        axes={**axes, check.draw_axis: len(rows) * copies},
        rows=rows,
        copies=copies,
        calls=calls,
        random=tuple(names.index(name) for name in check.random_inputs),
    )


def _draw_dim(definition: Definition, name: str, value, axis: str) -> int | None:
    """Where `axis` lies in input `name`'s shape, or None when it has none."""
    import torch

    shape = definition.inputs[name].shape
    dims = [str(d) for d in shape or []]
    if axis not in dims:
        return None
    if type(value) is not torch.Tensor or value.dim() != len(dims):
        raise DrawSetError(
            f"input {name!r} is not a tensor of its declared shape {dims}, so its rows cannot be repeated for the "
            "statistical check"
        )
    return dims.index(axis)
