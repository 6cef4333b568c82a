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



def ensure_local_probe(hardware: str | None, console) -> None:
    """Before `--hardware local` is looked up: probe this CPU now if no probe of it is stored, saying so.

    Without this a first run on a new machine would skip its SOL scores; probing takes a few seconds
    to a minute and happens once per machine (the result is kept in solbench's cache folder).
    """
    from solbench.hardware import LOCAL_ID
    from solbench.hardware.local import load_or_probe

    if hardware is None or hardware.lower() != LOCAL_ID:
        return
    outcome = load_or_probe(lambda message: console.print(message, highlight=False))
    if outcome.measured_now:
        console.print(f"probed this CPU in {outcome.result.seconds:.0f} s; stored at {outcome.path}", highlight=False)
