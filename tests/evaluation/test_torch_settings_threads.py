"""Evaluations in threads of one process each compute under their own torch settings (torch_settings.py): the
settings are the process's, so a thread running under its own keeps them until it is done, and the process's
settings are what they were once every thread is done."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

import pytest

from solbench.evaluation import torch_settings
from solbench.evaluation.torch_settings import TorchSettings, running_as

WAIT_S = 30.0
"""Longest wait for the other thread: reached only when the code under test deadlocks."""


class _AnnouncingLock:
    """The settings lock, announcing each thread that asks for it before the real lock decides whether it waits."""

    def __init__(self, inner, asked: Callable[[str], None]):
        self.inner, self.asked = inner, asked

    def __enter__(self):
        self.asked(threading.current_thread().name)
        return self.inner.__enter__()

    def __exit__(self, *exc):
        return self.inner.__exit__(*exc)


def _precision() -> str:
    import torch

    return torch.get_float32_matmul_precision()


def _wait(event: threading.Event, what: str) -> None:
    if not event.wait(WAIT_S):
        raise TimeoutError(what)


def test_two_threads_with_different_settings_each_compute_under_their_own(monkeypatch):
    """First holds its settings while second asks for others: second waits until first is done, so neither sees
    the other's, and the settings the process had are restored, not first's (which second would have found)."""
    original = TorchSettings.current()
    assert original.float32_matmul_precision == "highest"
    wanted = {"first": "high", "second": "medium"}
    first_inside, second_arrived, first_done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, str] = {}
    errors: list[BaseException] = []

    def announce(name: str) -> None:
        if name == "second":
            second_arrived.set()  # it asked; from here it either waits for first or goes in (no lock)

    monkeypatch.setattr(torch_settings, "_SETTINGS_TURN", _AnnouncingLock(torch_settings._SETTINGS_TURN, announce))

    def first() -> None:
        with running_as(replace(original, float32_matmul_precision=wanted["first"])):
            first_inside.set()
            _wait(second_arrived, "second never asked for its settings")
            seen["first"] = _precision()
        first_done.set()

    def second() -> None:
        _wait(first_inside, "first never ran under its settings")
        with running_as(replace(original, float32_matmul_precision=wanted["second"])):
            second_arrived.set()
            _wait(first_done, "first never finished")
            seen["second"] = _precision()

    threads = [
        threading.Thread(target=_recording(body, errors), name=body.__name__, daemon=True) for body in (first, second)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT_S)
    finally:
        after = TorchSettings.current()
        original.apply()  # for the tests that follow, should this one fail
    assert not errors, errors
    assert seen == wanted
    assert after == original


def test_a_thread_under_settings_may_ask_for_settings_again():
    """Re-entrant: an evaluation started inside `running_as` (a caller's own) does not wait for itself."""
    original = TorchSettings.current()
    seen: list[str] = []
    errors: list[BaseException] = []

    def nested() -> None:
        with running_as(replace(original, float32_matmul_precision="high")):
            with running_as(replace(original, float32_matmul_precision="medium")):
                seen.append(_precision())
            seen.append(_precision())

    thread = threading.Thread(target=_recording(nested, errors), daemon=True)
    thread.start()
    thread.join(WAIT_S)
    if thread.is_alive():
        pytest.fail("a thread waited for the settings it held")
    assert not errors, errors
    assert seen == ["medium", "high"]
    assert TorchSettings.current() == original


def _recording(body: Callable[[], None], errors: list[BaseException]) -> Callable[[], None]:
    def run() -> None:
        try:
            body()
        except BaseException as error:  # noqa: BLE001 (handed to the test's thread, which fails on it)
            errors.append(error)

    run.__name__ = body.__name__
    return run
