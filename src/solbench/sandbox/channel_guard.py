"""The private channel stays the one the parent handed over: a reply goes out only through it.

The sandbox's end of the channel is a file descriptor in the solution's own process, so a solution
can `dup2` a proxy over it and rewrite every reply on its way to the parent (pygpubench #23's
signature bypass, corpus entry `channel_proxy_rewrites_samples_runtime`). The channel's identity
(device and inode) is taken before any solution code runs and compared right before and right after
every reply is sent. A swap is answered once, over a private duplicate taken at the same time, with
the refusal (rule ``channel``), and the sandbox exits: nothing it says later can be trusted. The guard's
methods and its attributes on the running server are on the integrity list (protected.py), so a
solution can neither rebind them nor point the guard at its proxy.

What this cannot see: a proxy put in place between the check and the send and taken away again right
after it. Closing that needs the timing in a process the solution does not run in.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import Any

CHANNEL_TAMPERED_EXIT = 86
"""The sandbox's exit status after a swap was found (a refusal was sent first, where the duplicate still works)."""


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        status = os.fstat(fd)
    except OSError:
        return None
    return status.st_dev, status.st_ino


class ChannelGuard:
    def __init__(self, channel: socket.socket):
        self._fd = channel.fileno()
        self._identity = _identity(self._fd)
        self._private = socket.socket(fileno=os.dup(self._fd))
        """A duplicate of the untouched channel, to answer a swap on."""

    def __enter__(self) -> ChannelGuard:
        return self

    def __exit__(self, *exc_info) -> None:
        self._private.close()

    def intact(self) -> bool:
        return _identity(self._fd) == self._identity

    def check(self, encode_refusal: Callable[[], dict[str, Any]]) -> None:
        """Return if the channel is the one handed over; else refuse and exit (`refuse_and_exit`)."""
        if not self.intact():
            self.refuse_and_exit(encode_refusal)

    def refuse_and_exit(self, encode_refusal: Callable[[], dict[str, Any]]) -> None:
        """Send `encode_refusal()` (a GuardTripped, encoded) over the private duplicate, if it is still the channel,
        then exit at once: the solution's threads, its proxy among them, die with the process."""
        from solbench.sandbox.wire import send_message

        try:
            if _identity(self._private.fileno()) == self._identity:
                send_message(self._private, encode_refusal())
        finally:
            os._exit(CHANNEL_TAMPERED_EXIT)
