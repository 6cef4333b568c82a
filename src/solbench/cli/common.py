"""What the commands share: the usage error, the device choice, the evaluation settings and how an option
error names its flag."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Any

from solbench.errors import SolbenchError
from solbench.evaluation.config import EvaluationConfig

DEFAULTS = EvaluationConfig()
"""The one set of defaults: every option that feeds an EvaluationConfig takes its default from here."""


class UsageError(SolbenchError):
    """A bad combination of arguments."""


def library_defaults(function: Callable) -> dict[str, Any]:
    """The default of each parameter of a library workflow, for the options of the command that calls it: the
    command shows and uses the library's defaults rather than restating them."""
    return {
        name: parameter.default
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }


def told_with_flags(error, messages: Mapping[tuple[str, str | None], str]) -> Exception:
    """A runner option error (`RunOptionError`) in the command's own words where it has them, else as it is.

    `messages` maps (option, the option it conflicts with) to the message naming the command's flags.
    """
    message = messages.get((error.option, error.conflicts_with))
    return UsageError(message) if message else error


def flag_error(error, flags: dict[str, tuple[str, object]]) -> UsageError:
    """A HarnessOptionError told with the command's own flag and the value as typed.

    `flags` maps an EvaluationConfig option (``timer``, ``timing.budget_s``) to (flag, typed value).
    """
    flag, typed = flags.get(error.option, (error.option, error.value))
    return UsageError(f"{flag} {typed}: {error.reason}")


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


class CpuFlush(str, Enum):
    """EvaluationConfig.cpu_flush's choices (sandbox/flush.py CPU_FLUSH_MODES)."""

    operands = "operands"
    stream = "stream"


class Precision(str, Enum):
    """EvaluationConfig.precision's choices (sol/precision.py)."""

    auto = "auto"
    strict = "strict"
    tolerance = "tolerance"


PRECISION_HELP = (
    "Precision policy for the downgrade rule and T_SOL's matrix rate: strict (fp32 means "
    "fp32-accurate), tolerance (the lowest matrix precision each workload's tolerance admits), or auto "
    "(tolerance for problems imported from SOL-ExecBench, else strict)."
)


def evaluation_config(
    device: Device | None = None,
    *,
    rounds: int = DEFAULTS.rounds,
    budget_s: float = DEFAULTS.timing.budget_s,
    timeout_s: float = DEFAULTS.timeout_s,
    memory_limit_gb: float | None = None,
    timer: str | None = DEFAULTS.timer,
    data_roots: tuple[Path, ...] = DEFAULTS.data_roots,
    **fixed,
) -> EvaluationConfig:
    """EvaluationConfig's defaults with the command's options applied, device resolved.

    `fixed` holds settings a command always sets (baselines do not time the reference).
    """
    from solbench.evaluation import HarnessOptionError
    from solbench.evaluation.config import check_device_available

    memory = int(memory_limit_gb * 2**30) if memory_limit_gb is not None else DEFAULTS.memory_limit_bytes
    try:  # every harness option is checked before anything runs: a bad one is exit 2, with no trace
        config = replace(
            DEFAULTS,
            device=device.value if device else DEFAULTS.device,
            rounds=rounds,
            timing=replace(DEFAULTS.timing, budget_s=budget_s),
            timeout_s=timeout_s,
            memory_limit_bytes=memory,
            timer=timer,
            data_roots=tuple(data_roots),
            **fixed,
        ).resolved()
        check_device_available(config.device)  # --device cuda where there is none: exit 2 naming the flag
    except HarnessOptionError as error:
        flags = {
            "device": ("--device", device.value if device else DEFAULTS.device),
            "timeout_s": ("--timeout", timeout_s),
            "rounds": ("--rounds", rounds),
            "timing.budget_s": ("--budget", budget_s),
            "timer": ("--timer", timer),
            "memory_limit_bytes": ("--memory-limit-gb", memory_limit_gb),
        }
        raise flag_error(error, flags) from None
    return config


def hardware_for_device(hardware: str | None, device: str) -> str:
    """The hardware T_SOL is computed for where a command needs one (optimize, mcp): `--hardware` as given, else
    this CPU's probe (`local`) on the CPU; on a GPU it must be named, since no probe measures one."""
    if hardware is not None:
        return hardware
    if device != "cpu":
        raise UsageError("--hardware is required on a GPU: name the spec T_SOL is computed for (e.g. H200)")
    return "local"


def ensure_local_probe(hardware: str | None, console) -> None:
    """Before `--hardware local` is looked up: probe this CPU now if no probe of it is stored, saying so
    (`hardware.local.probe_if_missing`)."""
    from solbench.hardware.local import probe_if_missing

    probe_if_missing(hardware, lambda message: console.print(message, highlight=False))
