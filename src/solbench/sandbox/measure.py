"""The sampling policy: warm up, then time calls until the mean is known well enough or time runs out.

Inputs rotate between iterations (`prepare(i)` copies variant i's content into the live buffers
outside the timed region), the cache is flushed before every call, and one timed output per input
variant is kept so that timed work can be checked too. Which one is drawn after each call
returns, from the OS's randomness (reservoir sampling: every iteration of a variant is equally
likely to be the one kept), so no state a call could read says whether its output will be checked.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from solbench.sandbox import stats


def _os_random_below(bound: int, urandom: Callable[[int], bytes]) -> int:
    """A number in [0, bound) straight from the OS: `urandom` is `os.urandom` as `measure` found it before the
    loop's first call (the integrity guard checks it there), not looked up again, and not `secrets` or `random`,
    whose Python-level objects (`secrets._sysrand`) a solution could patch to steer which output is kept. 64 bits:
    the bias of the modulo is below bound / 2**64."""
    return int.from_bytes(urandom(8), "little") % bound


def _iteration_seed(plan, urandom: Callable[[int], bytes]) -> int | None:
    """One iteration's perturbation seed: the plan's, mixed with 48 bits from the OS drawn now (None: no
    perturbation)."""
    if plan.perturb_seed is None:
        return None
    return plan.perturb_seed ^ _os_random_below(1 << 48, urandom)


@dataclass(frozen=True)
class TimingPlan:
    __pydantic_config__ = {"extra": "forbid"}  # a field of the sandbox protocol's TimeRequest

    budget_s: float = 1.0
    """Time for the timed loop; it stops early once the target is met."""
    warmup_s: float = 0.2
    min_warmup: int = 3
    """Allocator and page-fault state settle over the first calls; three is the least seen to suffice."""
    min_iterations: int = 5
    max_iterations: int = 2000
    target_rel_std_err: float = 0.01
    """Stop once the standard error of the mean is below this share of the mean."""
    min_iterations_over_budget: int = 3
    """Even a call slower than the whole budget is timed this many times."""
    capture: bool = False
    """Keep one timed output per input variant, for the parent to check."""
    perturb_seed: int | None = None
    """Makes every iteration's input content unique (see rotation.py); None: plain rotation. Each iteration's own
    seed is this one mixed with a draw from the OS as the iteration is prepared (`Measurement.seeds`), so no state
    before it says what that iteration's inputs will be: answers cannot be computed ahead of the calls."""


@dataclass
class Measurement:
    backend: str
    samples_s: list[float]
    warmup: int
    variants: int
    flush_bytes: int
    flush_mode: Literal["operands", "stream", "l2", "none"] = "none"
    """Which flush ran before every call: ``operands``, ``stream``, ``l2`` or ``none`` (flush.py)."""
    flush_note: str | None = None
    """Why that flush ran instead of the one asked for, or None."""
    resolution_s: float | None = None
    """The timer's resolution, where it states one."""
    captured: dict[int, Any] = field(default_factory=dict)
    """Iteration index -> that call's outputs, one iteration per input variant (when the plan captures)."""
    seeds: list[int] | None = None
    """Per timed iteration, the perturbation seed its inputs were made with (where the plan perturbs)."""
    warnings: list[str] = field(default_factory=list)


def _should_stop(plan: TimingPlan, samples: list[float], elapsed_s: float, captures_left: bool) -> bool:
    count = len(samples)
    if count >= plan.max_iterations:
        return True
    if captures_left:
        return False
    if count >= plan.min_iterations and stats.relative_standard_error(samples) <= plan.target_rel_std_err:
        return True
    return elapsed_s >= plan.budget_s and count >= plan.min_iterations_over_budget


def measure(
    call: Callable[[], Any],
    prepare: Callable[[int, int | None], None],
    variants: int,
    timer,
    flusher,
    plan: TimingPlan,
    snapshot: Callable[[Any], Any] = lambda outputs: outputs,
    clock: Callable[[], float] = time.monotonic,
    between_calls: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
    on_sample: Callable[[int, float], None] | None = None,
    on_seed: Callable[[int, int], None] | None = None,
    no_hooks: Callable[[], object] = lambda: None,
) -> Measurement:
    """Time `call` under `plan`. `prepare(i, seed)` loads iteration i's inputs, perturbed with `seed` (None: as
    the caller's rotation has it); `snapshot` copies outputs to keep.

    `between_calls()` wraps the harness's own work outside the timer (the sandbox checks there that
    no solution thread worked meanwhile). `on_seed(i, seed)` hands on iteration i's perturbation seed as it is
    drawn, before anything of that iteration runs, and `on_sample(i, seconds)` its call's time the moment it is
    taken (the sandbox sends both to the parent: protocol.SeedDrawn, protocol.SampleTaken). `no_hooks()` runs just
    before each draw: the sandbox clears trace and profile functions there, which could otherwise rewrite this
    frame's locals (a seed, a sample) before they are sent.
    """
    urandom = os.urandom  # before this loop's first call: a local, which no Python code can rebind
    result: list[Any] = [None]

    def invoke() -> None:
        result[0] = call()

    warmup = 0
    start = clock()
    while warmup < plan.min_warmup or clock() - start < plan.warmup_s:
        with between_calls():
            prepare(-1 - warmup, _iteration_seed(plan, urandom))  # warm-up iterations get content of their own too
            flusher.flush()
        timer.time_call(invoke)
        warmup += 1
    measurement = Measurement(
        backend=timer.name,
        samples_s=[],
        warmup=warmup,
        variants=variants,
        flush_bytes=flusher.bytes,
        flush_mode=getattr(flusher, "mode", "none"),
        flush_note=getattr(flusher, "note", None),
        seeds=None if plan.perturb_seed is None else [],
    )
    kept: dict[int, int] = {}
    """Input variant -> the iteration whose output is kept for it."""
    start = clock()
    iteration = 0
    while not _should_stop(plan, measurement.samples_s, clock() - start, plan.capture and iteration < variants):
        no_hooks()
        seed = _iteration_seed(plan, urandom)
        if on_seed is not None and seed is not None:
            on_seed(iteration, seed)  # sent before any of this iteration's work, where the solution's code could run
        with between_calls():
            prepare(iteration, seed)
            flusher.flush()
        sample = timer.time_call(invoke)
        if on_sample is not None:
            on_sample(iteration, sample)  # before the harness's work after the call, as the seed was
        measurement.samples_s.append(sample)
        if measurement.seeds is not None and seed is not None:
            measurement.seeds.append(seed)
        if plan.capture:
            variant, seen = iteration % variants, iteration // variants + 1
            # keep this one with probability 1/seen: uniform over the variant's calls
            if _os_random_below(seen, urandom) == 0:
                previous = kept.get(variant)
                if previous is not None:
                    measurement.captured.pop(previous, None)
                kept[variant] = iteration
                with between_calls():
                    measurement.captured[iteration] = snapshot(result[0])
        iteration += 1
    resolution = getattr(timer, "resolution_s", lambda: 0.0)()
    measurement.resolution_s = resolution or None
    if resolution and stats.median(measurement.samples_s) < 100 * resolution:
        measurement.warnings.append("median is within 100x of the timer's resolution")
    if stats.relative_standard_error(measurement.samples_s) > plan.target_rel_std_err:
        measurement.warnings.append(
            f"relative standard error {stats.relative_standard_error(measurement.samples_s):.3f} "
            f"above target {plan.target_rel_std_err} after {len(measurement.samples_s)} samples"
        )
    return measurement
