"""Steady-state steps under torch.profiler -> one record per ATen op call with its self time and context.

Warm-up steps run first, outside the profiler (allocator, lazy initialisation, oneDNN primitive caches);
each profiled step is a ``reach.step#i`` range so per-step totals, and hence the spread, come from the
same trace. Self time is CPU time of the op itself on CPU (an op's children are separate records), and
the device time of the kernels it launched on CUDA.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from solbench.reach.built_model import BuiltModel
from solbench.reach.errors import ReachError
from solbench.reach.module_context import MODULE_PREFIX, module_ranges

STEP_PREFIX = "reach.step#"
BACKWARD_PREFIX = "autograd::engine::evaluate_function: "


@dataclass(frozen=True)
class ProfiledOp:
    """One op's self time in one step, with what the profile says about why it ran."""

    step: int
    name: str
    """``aten::addmm``; non-ATen records (autograd engine, optimiser ranges) keep their profiler names."""
    self_us: float
    shapes: tuple
    """Input shapes as the profiler recorded them."""
    modules: tuple[str, ...]
    """Model parts (module classes) whose forwards issued it, innermost first; empty in backward and optimiser."""
    ancestors: tuple[str, ...]
    """Names of the enclosing ops, outermost first (module and step ranges left out)."""
    backward_of: str | None = None
    """The autograd node (``AddmmBackward0``) whose backward issued it, if any."""


@dataclass
class Profile:
    calls: list[ProfiledOp]
    step_us: list[float]
    """Each profiled step's duration in the profile (its range on the main thread)."""
    wall_us: list[float]
    """Each profiled step's wall-clock time around the call (includes profiler overhead)."""
    device: str
    warmup: int
    seconds: float = 0.0
    """How long profiling took, warm-up included."""
    notes: list[str] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return len(self.step_us)


def profile_model(built: BuiltModel, *, steps: int = 5, warmup: int = 2, device: str = "cpu") -> Profile:
    """Run ``warmup`` unprofiled steps, then ``steps`` profiled ones, and collect every op's self time."""
    import torch
    from torch.autograd.profiler import record_function
    from torch.profiler import ProfilerActivity, profile

    if steps < 2:
        raise ReachError("--steps must be at least 2: the spread needs several steady-state steps")
    started = time.perf_counter()
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with module_ranges(built.module):
        for _ in range(warmup):
            built.step()
        sync()
        wall = []
        with profile(activities=activities, record_shapes=True) as prof:
            for i in range(steps):
                begin = time.perf_counter()
                with record_function(f"{STEP_PREFIX}{i}"):
                    built.step()
                    sync()
                wall.append((time.perf_counter() - begin) * 1e6)
    calls, step_us = _calls(prof.events(), device)
    if len(step_us) != steps:
        raise ReachError(
            f"the profile holds {len(step_us)} of {steps} step ranges; the model's step may have "
            "failed or run on another thread"
        )
    return Profile(
        calls=calls, step_us=step_us, wall_us=wall, device=device, warmup=warmup, seconds=time.perf_counter() - started
    )


def _calls(events, device: str) -> tuple[list[ProfiledOp], list[float]]:
    steps: dict[int, float] = {}
    ranges: list[tuple[float, float, int]] = []
    for event in events:
        if event.name.startswith(STEP_PREFIX):
            index = int(event.name[len(STEP_PREFIX) :])
            steps[index] = event.time_range.elapsed_us()
            ranges.append((event.time_range.start, event.time_range.end, index))
    # DeviceType is public in torch.autograd but not re-exported by its stubs.
    from torch.autograd import DeviceType  # pyright: ignore[reportPrivateImportUsage]

    calls = []
    for event in events:
        if event.name.startswith((STEP_PREFIX, MODULE_PREFIX)) or event.name.startswith("ProfilerStep"):
            continue
        if event.device_type != DeviceType.CPU:  # a kernel record: its time is in its launching op's device time
            continue
        self_us = event.self_device_time_total if device == "cuda" else event.self_cpu_time_total
        if self_us <= 0:
            continue
        step, modules, ancestors, backward = None, [], [], None
        parent = event.cpu_parent
        while parent is not None:
            name = parent.name
            if name.startswith(STEP_PREFIX):
                step = int(name[len(STEP_PREFIX) :])
            elif name.startswith(MODULE_PREFIX):
                modules.append(name[len(MODULE_PREFIX) :])
            else:
                if name.startswith(BACKWARD_PREFIX) and backward is None:
                    backward = name[len(BACKWARD_PREFIX) :]
                ancestors.append(name)
            parent = parent.cpu_parent
        if step is None:  # another thread (autograd, a data loader): place it by time
            start = event.time_range.start
            step = next((i for a, b, i in ranges if a <= start <= b), None)
            if step is None:
                continue
        if event.name.startswith(BACKWARD_PREFIX):
            backward = event.name[len(BACKWARD_PREFIX) :]
        calls.append(
            ProfiledOp(
                step=step,
                name=event.name,
                self_us=float(self_us),
                shapes=tuple(tuple(s) if isinstance(s, list) else s for s in (event.input_shapes or ())),
                modules=tuple(modules),
                ancestors=tuple(reversed(ancestors)),
                backward_of=backward,
            )
        )
    return calls, [steps[i] for i in sorted(steps)]


def spread(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0
