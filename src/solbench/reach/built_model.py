"""What every model source hands the profiler: a module, a step that runs it once, and how it was scaled."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class BuiltModel:
    """A model ready to profile.

    ``step`` runs one steady-state step (a forward in inference; forward, backward and the optimiser's
    update in training) so that the profiler times exactly what a real step would run.
    ``scaling`` says, in words, where the model differs from its published configuration (fewer layers,
    fewer embedding rows), because a report must never pass a scaled model off as the real one.
    """

    name: str
    kind: str
    """'transformers', 'dlrm' or 'module'."""
    module: Any
    step: Callable[[], Any]
    scaling: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    """The configuration values the model was built with (after scaling)."""
    module_families: dict[str, str] = field(default_factory=dict)
    """Module class name -> op family, for models whose classes the default context rules do not know."""
    depth: DepthScaling | None = None
    """Set when layers were left out: how to extrapolate the profile to the published depth."""


@dataclass(frozen=True)
class DepthScaling:
    """``kept`` of ``published`` repeated layers (module classes matching ``layer_glob``) were built."""

    layer_glob: str
    kept: int
    published: int

    @property
    def factor(self) -> float:
        return self.published / self.kept


def training_step(module, inputs: tuple, loss_of: Callable[[Any], Any], optimizer) -> Callable[[], Any]:
    """A closure running forward, backward and the optimiser step: the unit a training profile times."""

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(module(*inputs))
        loss.backward()
        optimizer.step()
        return loss

    return step


def inference_step(module, inputs: tuple) -> Callable[[], Any]:
    """A closure running one forward without autograd."""
    import torch

    def step():
        with torch.inference_mode():
            return module(*inputs)

    return step


def mean_of_output(output) -> Any:
    """A scalar loss of any model output (tensor, tuple, or transformers ModelOutput): the mean of its first tensor."""
    import torch

    if isinstance(output, torch.Tensor):
        return output.float().mean()
    if hasattr(output, "logits"):
        return output.logits.float().mean()
    if isinstance(output, (tuple, list)) and output:
        return mean_of_output(output[0])
    if isinstance(output, dict) and output:
        return mean_of_output(next(iter(output.values())))
    raise TypeError(f"cannot reduce a model output of type {type(output).__name__} to a loss")
