"""What the commands share: the usage error, device defaults and how an option error names its flag."""

from __future__ import annotations

from enum import Enum

from solbench.errors import SolbenchError


class UsageError(SolbenchError):
    """A bad combination of arguments."""


def flag_error(error, flags: dict[str, tuple[str, object]]) -> UsageError:
    """A HarnessOptionError told with the command's own flag and the value as typed.

    `flags` maps an EvaluationConfig option (``timer``, ``timing.budget_s``) to (flag, typed value).
    """
    flag, typed = flags.get(error.option, (error.option, error.value))
    return UsageError(f"{flag} {typed}: {error.reason}")


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
