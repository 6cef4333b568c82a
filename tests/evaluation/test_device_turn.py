"""One timing at a time per physical device: a timed section waits for another's to end, and the trace says so."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from solbench.evaluation import evaluate, torch_settings
from solbench.evaluation.device_turn import DeviceLock, device_key, timing_turn
from solbench.spec import load_problem
from tests.conftest import make_solution

GPUS: dict[int | None, str] = {None: "GPU-0a0b", 0: "GPU-0a0b", 1: "GPU-1c1d"}
"""A machine's GPUs as a process sees them: index (None: the current device) to UUID."""
SECOND_ALONE: dict[int | None, str] = {None: "GPU-1c1d", 0: "GPU-1c1d"}
"""The same machine seen by a process started with CUDA_VISIBLE_DEVICES=1."""


def test_a_second_turn_on_a_device_waits_for_the_first_and_other_devices_do_not():
    events: list[str] = []
    with timing_turn("cpu"):
        waiter = threading.Thread(target=lambda: _take("cpu", events))
        waiter.start()
        with DeviceLock("cuda:1", GPUS.__getitem__) as other_gpu, other_gpu.turn() as other:
            assert other.waited_s < 0.5  # another device's turn is free meanwhile
        time.sleep(0.3)
        events.append("released")
    waiter.join(timeout=10)
    assert events == ["released", "cpu turn"]


def _take(device: str, events: list[str]) -> None:
    with timing_turn(device) as turn:
        assert turn.waited_s >= 0.25
        events.append(f"{device} turn")


def test_a_lock_is_named_after_the_physical_device_not_after_what_a_process_calls_it():
    def untouched(index: int | None) -> str:
        raise AssertionError("a CPU's lock looked a GPU up")

    assert device_key("cpu", untouched) == device_key("cpu:0", untouched) == "cpu"  # one per machine
    gpus = GPUS.__getitem__
    assert device_key("cuda", gpus) == device_key("cuda:0", gpus) == "cuda-GPU-0a0b"  # one GPU, two names
    assert device_key("cuda:1", gpus) == "cuda-GPU-1c1d"
    assert device_key("cuda:0", SECOND_ALONE.__getitem__) == device_key("cuda:1", gpus)  # one GPU, two indices
    assert device_key("cuda", lambda index: "GPU/../x y") == "cuda-GPU_.._x_y"  # stays a file in the lock folder


_RECORDERS: list[tuple[str, list[str]]] = []
"""What the audit hook records into: (part of a path, the files opened with it)."""


@functools.cache
def _install_audit_hook() -> None:
    """Once per process: an audit hook cannot be removed, so it records only while `_RECORDERS` holds something."""

    def audit(event: str, args: tuple) -> None:
        if event == "open" and _RECORDERS and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            for part, opened in _RECORDERS:
                if part in path:
                    opened.append(path)

    sys.addaudithook(audit)


def _count_opens(path_part: str) -> list[str]:
    """Files opened from now on (by os.open or open) whose path holds `path_part`, until `_RECORDERS` is cleared."""
    _install_audit_hook()
    opened: list[str] = []
    _RECORDERS.append((path_part, opened))
    return opened


def _open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_an_evaluation_times_only_in_its_turn_and_records_the_wait_and_the_load(
    vector_add_problem, fast_config, monkeypatch
):
    """Correctness rounds run while another evaluation holds the turn; warm-up and timed calls wait for it. The
    evaluation's workloads take their turns through one lock file, opened once and closed at the end, each turn
    taken with the torch settings already held (waiting for them inside a turn would hold the device idle)."""
    settings_held: list[bool] = []
    real_turn = DeviceLock.turn

    def turn(self):
        settings_held.append(torch_settings._SETTINGS_TURN._is_owned())  # pyright: ignore[reportAttributeAccessIssue]
        return real_turn(self)

    solution = make_solution("import time\ndef run(x, y):\n    print('at', time.monotonic())\n    return x + y\n")
    problem = load_problem(vector_add_problem)
    assert len(problem.workloads) > 1
    traces: list = []
    descriptors = _open_descriptors()
    with timing_turn(fast_config.device):
        monkeypatch.setattr(DeviceLock, "turn", turn)  # the evaluation's turns, not this one
        opened = _count_opens("timing-")
        worker = threading.Thread(target=lambda: traces.extend(evaluate(problem, solution, fast_config)))
        worker.start()
        time.sleep(3.0)
        released = time.monotonic()
    try:
        worker.join(timeout=120)
    finally:
        _RECORDERS.clear()
    first = traces[0].evaluation
    assert first.status.value == "PASSED", first.log
    stamps = [float(line.split()[1]) for line in first.log.splitlines() if line.startswith("at ")]
    correctness, timed = stamps[: fast_config.rounds], stamps[fast_config.rounds :]
    assert timed and min(timed) >= released, (released, stamps)
    assert first.solbench.timing.device_wait_s > 0 and first.solbench.timing.load_average is not None
    if max(correctness) < released - 0.5:  # the rounds were done well before: the whole wait was for the turn
        assert first.solbench.timing.device_wait_s > released - max(correctness) - 0.5
    assert [t.evaluation.status.value for t in traces] == ["PASSED"] * len(problem.workloads)
    assert [Path(p).name for p in opened] == ["timing-cpu.lock"]  # once for every workload
    assert _open_descriptors() == descriptors  # and closed
    assert settings_held == [True] * len(problem.workloads)


@pytest.mark.gpu
def test_every_name_of_a_gpu_takes_its_one_lock_whatever_the_process_sees():
    """`cuda`, `cuda:N` and the same GPU seen by a process with other CUDA_VISIBLE_DEVICES: one UUID, one lock,
    the UUID nvidia-smi reports."""
    import torch

    last = torch.cuda.device_count() - 1
    key = device_key(f"cuda:{last}")
    assert device_key("cuda") == device_key(f"cuda:{torch.cuda.current_device()}")
    assert DeviceLock("cuda").path == DeviceLock(f"cuda:{torch.cuda.current_device()}").path
    listed = subprocess.run(
        ["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True, text=True, check=True
    ).stdout.split()
    matching = [uuid for uuid in listed if _hex(uuid.removeprefix("GPU-").removeprefix("MIG-")) == _hex(key[5:])]
    assert len(matching) == 1, (key, listed)
    code = "from solbench.evaluation.device_turn import device_key\nprint(device_key('cuda:0'))\n"
    other = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "CUDA_VISIBLE_DEVICES": matching[0]},
        capture_output=True,
        text=True,
        check=True,
    )
    assert other.stdout.strip() == key


def _hex(text: str) -> str:
    return "".join(c for c in text.lower() if c in "0123456789abcdef")
