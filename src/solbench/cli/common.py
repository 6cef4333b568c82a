"""What the commands share: the usage error and device defaults."""

from __future__ import annotations

from enum import Enum

from solbench.errors import SolbenchError


class UsageError(SolbenchError):
    """A bad combination of arguments."""


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
