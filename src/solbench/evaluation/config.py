"""Settings of one evaluation run, checked before any sandbox starts."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from solbench.evaluation.errors import HarnessOptionError
from solbench.sandbox.measure import TimingPlan

AUTO_DEVICE = "auto"
MAX_INPUT_SEED = 2**62
"""Input seeds are below this: the evaluator draws 62-bit ones."""


def default_memory_limit_bytes() -> int:
    """Half of physical memory: the parent holds inputs, references and golden results too."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


def resolve_device(device: str) -> str:
    """`auto` becomes ``cuda`` when a CUDA device is present, else ``cpu``; any other name is returned as is.

    Imports torch only for `auto`, so building a config never loads it.
    """
    if device != AUTO_DEVICE:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass(frozen=True)
class EvaluationConfig:
    """Settings of one evaluation. These defaults are the defaults of the library and of every CLI command.

    Raises HarnessOptionError, naming the field, for a value the harness cannot run with (see
    `check_harness_options`); whether the device exists here is checked when the evaluation starts.
    """

    device: str = AUTO_DEVICE
    """``cpu``, ``cuda`` (``cuda:N``), or ``auto``: cuda when present, else cpu, decided when an evaluation starts."""
    timeout_s: float = 120.0
    """Wall-clock limit for each sandbox request: one correctness call, or one workload's timing."""
    build_timeout_s: float = 900.0
    rounds: int = 3
    """Correctness rounds, each on fresh inputs; timing rotates through the same sets."""
    timing: TimingPlan = TimingPlan()
    """How solution and reference are timed; capture iterations are chosen per workload."""
    timer: str | None = None
    """A timer backend's name (sandbox/timers/), or None for the device's default."""
    flush_cache: bool = True
    """Flush the caches before every timed call (solution and reference alike)."""
    cpu_flush: str = "operands"
    """How a CPU run flushes: ``operands`` (the native helper evicts every cache line of the call's input and output
    buffers; code stays warm, as on a GPU after an L2 flush) or ``stream`` (a 64 MiB write that evicts code and data
    alike). A CUDA run always flushes its L2. See sandbox/flush.py."""
    time_solution: bool = True
    """False: correctness rounds only (an optimisation loop's `test`): no timed loop and no reference timing; a
    PASSED trace then has no performance record."""
    time_reference: bool = True
    check_precision: bool = True
    precision: str = "auto"
    """The precision policy (sol/precision.py): ``strict`` (fp32 means fp32-accurate: the downgrade rule holds a
    solution to the float64 golden result as closely as the fp32 reference), ``tolerance`` (the lowest matrix
    precision the workload's tolerance admits, bf16 say, is allowed, and T_SOL uses its rate), or ``auto``:
    tolerance for problems imported from SOL-ExecBench, strict for every other."""
    static_check: bool = True
    """Refuse solutions with blocking static findings (REWARD_HACK) before running them."""
    memory_limit_bytes: int | None = field(default_factory=default_memory_limit_bytes)
    """Sandbox memory limit; default half of physical memory, None for no limit."""
    containment: str = "auto"
    """How the sandbox's processes are held (docs/sandbox.md): ``auto``, the strongest this machine offers, or a
    weaker one to try a fallback: ``pid-namespace`` (no cgroup), ``subreaper`` (neither)."""
    data_roots: tuple[Path, ...] = ()
    threads: int | None = None
    """torch's intra-op CPU threads for the solution's sandbox and for the reference alike, so the reference's
    outputs and T_b are computed as the candidate runs (torch_settings.py); None: the evaluating thread's count
    when the evaluation starts (`with_threads`). A run of N workers gives each its share of the CPUs."""
    profile: bool = False
    """Profile each passing workload after its timed loop: the solution's calls run again, untimed, under
    torch.profiler, and the trace keeps the top ops and their share of the time (sandbox/profiling.py)."""
    input_seed: int | None = None
    """None (the default): each workload draws a fresh secret seed for its inputs. A number: every workload's
    inputs come from it (round r from seed + r), so a failure recorded with its trace's ``input_seed`` can be
    replayed on the same inputs (`env.test(..., seed=)`, `solbench replay --seed`). Never for scoring: a solution
    that knows the seed can precompute its outputs."""

    def __post_init__(self) -> None:
        check_harness_options(self)

    def resolved(self) -> EvaluationConfig:
        """This config with `auto` replaced by the device this machine has (its timer is checked again)."""
        return replace(self, device=resolve_device(self.device))

    def with_threads(self) -> EvaluationConfig:
        """This config with `threads` decided: the calling thread's torch count where it names none. Decided where
        the evaluation runs (a worker, a remote machine), never where the config was built."""
        if self.threads is not None:
            return self
        from solbench.evaluation.torch_settings import current_threads

        return replace(self, threads=current_threads())


_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")


def check_harness_options(config: EvaluationConfig) -> None:
    """Raise HarnessOptionError for the first option the harness cannot run with; imports no torch."""
    from solbench.sandbox.timers import TimerUnavailable, check_timer

    if not isinstance(config.device, str) or not _DEVICE.fullmatch(config.device):
        raise HarnessOptionError("device", config.device, "unknown device (known: auto, cpu, cuda, cuda:N)")
    try:
        # With device `auto` only the timer's name can be checked now; `resolved()` checks the rest.
        check_timer(config.timer, None if config.device == AUTO_DEVICE else config.device)
    except TimerUnavailable as error:
        raise HarnessOptionError("timer", config.timer, str(error)) from None
    for name in ("flush_cache", "time_solution", "time_reference", "check_precision", "static_check", "profile"):
        if not isinstance(getattr(config, name), bool):
            raise HarnessOptionError(name, getattr(config, name), "must be true or false")
    from solbench.sandbox.flush import CPU_FLUSH_MODES
    from solbench.spec.trace import PRECISION_POLICIES

    if config.precision not in PRECISION_POLICIES:
        raise HarnessOptionError(
            "precision", config.precision, f"unknown precision policy (known: {', '.join(PRECISION_POLICIES)})"
        )

    from solbench.evaluation.containment import CONTAINMENTS

    if config.containment not in CONTAINMENTS:
        raise HarnessOptionError(
            "containment", config.containment, f"unknown containment (known: {', '.join(CONTAINMENTS)})"
        )
    if config.cpu_flush not in CPU_FLUSH_MODES:
        raise HarnessOptionError("cpu_flush", config.cpu_flush, f"unknown flush (known: {', '.join(CPU_FLUSH_MODES)})")
    _check_count("rounds", config.rounds, least=1)
    if config.threads is not None:
        _check_count("threads", config.threads, least=1)
    if config.input_seed is not None:
        _check_count("input_seed", config.input_seed, least=0)
        if config.input_seed >= MAX_INPUT_SEED:
            raise HarnessOptionError("input_seed", config.input_seed, f"must be below 2**62 ({MAX_INPUT_SEED})")
    _check_seconds("timeout_s", config.timeout_s, positive=True)
    _check_seconds("build_timeout_s", config.build_timeout_s, positive=True)
    if config.memory_limit_bytes is not None:
        _check_count("memory_limit_bytes", config.memory_limit_bytes, least=1)
    if not isinstance(config.timing, TimingPlan):
        raise HarnessOptionError("timing", config.timing, "must be a TimingPlan")
    check_timing_plan(config.timing)


def check_timing_plan(plan: TimingPlan, prefix: str = "timing.") -> None:
    """Raise HarnessOptionError for a plan the timed loop cannot follow (a negative budget, no iterations)."""
    for name in ("budget_s", "warmup_s"):
        _check_seconds(prefix + name, getattr(plan, name), positive=False)
    _check_count(prefix + "min_warmup", plan.min_warmup, least=0)
    _check_count(prefix + "min_iterations", plan.min_iterations, least=1)
    _check_count(prefix + "max_iterations", plan.max_iterations, least=plan.min_iterations, what="min_iterations")
    _check_count(prefix + "min_iterations_over_budget", plan.min_iterations_over_budget, least=1)
    _check_seconds(prefix + "target_rel_std_err", plan.target_rel_std_err, positive=True)
    if not isinstance(plan.capture, bool):
        raise HarnessOptionError(prefix + "capture", plan.capture, "must be true or false")
    if plan.perturb_seed is not None:
        _check_count(prefix + "perturb_seed", plan.perturb_seed, least=0)


def check_device_available(device: str) -> None:
    """Raise HarnessOptionError when `device` is not on this machine; imports torch for a CUDA device."""
    if device == "cpu":
        return
    import torch

    if not torch.cuda.is_available():
        raise HarnessOptionError("device", device, "no CUDA device is available here")
    index, count = int(device.partition(":")[2] or 0), torch.cuda.device_count()
    if index >= count:
        raise HarnessOptionError("device", device, f"no such CUDA device (this machine has {count})")


def _check_count(option: str, value, least: int, what: str | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise HarnessOptionError(option, value, "must be a whole number")
    if value < least:
        raise HarnessOptionError(
            option, value, "must be positive" if least == 1 and what is None else f"must be at least {what or least}"
        )


def _check_seconds(option: str, value, positive: bool) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise HarnessOptionError(option, value, "must be a finite number")
    if value < 0 or (positive and value == 0):
        raise HarnessOptionError(option, value, "must be positive" if positive else "must not be negative")
