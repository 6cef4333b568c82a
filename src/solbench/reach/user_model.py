"""``module:PATH.py:factory``: a user's own model, from a factory returning ``(module, example_inputs)``.

The file is the user's own code, imported as they would import it (it is not a submitted solution, so
it does not go through the sandbox). ``example_inputs`` is a tuple of positional arguments (or one tensor).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from solbench.reach.built_model import BuiltModel, inference_step, mean_of_output, training_step
from solbench.reach.errors import ReachError

PREFIX = "module:"


def parse_spec(spec: str) -> tuple[Path, str]:
    body = spec[len(PREFIX) :]
    path, sep, factory = body.rpartition(":")
    if not sep or not path.endswith(".py") or not factory.isidentifier():
        raise ReachError(f"{spec!r}: expected module:PATH.py:FACTORY (a function returning (module, example_inputs))")
    return Path(path), factory


def build_user_model(spec: str, *, mode: str, device: str) -> BuiltModel:
    import torch

    path, factory_name = parse_spec(spec)
    if not path.is_file():
        raise ReachError(f"{spec!r}: {path} does not exist")
    loader_spec = importlib.util.spec_from_file_location(f"solbench_reach_user_{path.stem}", path)
    assert loader_spec is not None and loader_spec.loader is not None, "a .py file (parse_spec) has a source loader"
    module = importlib.util.module_from_spec(loader_spec)
    loader_spec.loader.exec_module(module)
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise ReachError(f"{path} has no function {factory_name!r}")
    result = factory()
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], torch.nn.Module)):
        raise ReachError(f"{path}:{factory_name}() must return (torch.nn.Module, example_inputs)")
    model, inputs = result
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    model = model.to(device)
    inputs = tuple(x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs)
    if mode == "training":
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
        step = training_step(model, inputs, mean_of_output, optimizer)
        notes = ["training step: forward, the mean of the first output as loss, backward, SGD"]
    else:
        model.eval()
        step = inference_step(model, inputs)
        notes = ["inference step: one forward on the factory's example inputs"]
    return BuiltModel(
        name=f"{path.stem}:{factory_name}",
        kind="module",
        module=model,
        step=step,
        scaling=notes,
        config={"file": str(path), "factory": factory_name},
    )
