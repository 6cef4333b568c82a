"""Each timed iteration's perturbation seed goes to the parent as it is drawn (protocol.SeedDrawn), and its call's
time the moment the timer stops (protocol.SampleTaken).

The timing loop runs in the solution's interpreter, where its lists of samples and seeds can be found and rewritten
after the calls they describe (frames, gc, native code). What was already sent cannot be: the parent takes the
streamed samples as the measurement, rebuilds checked outputs' inputs from the streamed seeds, and refuses a final
`Timed` reply that differs from them. This module is imported (not `__main__`), so its globals are among those the
integrity guard fingerprints, and its functions are protected entries (sandbox/protected.py).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from solbench.sandbox import protocol
from solbench.sandbox.channel_guard import ChannelGuard
from solbench.sandbox.wire import send_message


def no_hooks() -> bool:
    """Clear the trace and profile functions; whether one was set (one set from native code, PyEval_SetProfile, is
    invisible to sys.getprofile: cleared all the same). The timing loop calls this at the end of each timed call and
    before each seed is drawn, so that no code of the solution's runs in the frames whose locals are sent."""
    import sys

    was_set = sys.gettrace() is not None or sys.getprofile() is not None
    sys.settrace(None)
    sys.setprofile(None)
    return was_set


def send_sample(
    channel: socket.socket, guard: ChannelGuard, refusal: Callable[[], Any], index: int, seconds: float
) -> None:
    """Send timed call `index`'s time on `channel`, after the guard has checked that it is still the private channel
    (`refusal`: the encoded refusal it sends and exits with where it is not)."""
    guard.check(refusal)
    send_message(channel, protocol.encode(protocol.SampleTaken(index=index, seconds=seconds)))


def send_seed(channel: socket.socket, guard: ChannelGuard, refusal: Callable[[], Any], index: int, seed: int) -> None:
    """Send timed iteration `index`'s perturbation seed on `channel`, as `send_sample` sends its time."""
    guard.check(refusal)
    send_message(channel, protocol.encode(protocol.SeedDrawn(index=index, seed=seed)))
