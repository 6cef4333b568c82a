"""One timing at a time per device: a timed section waits for another's to end, and the trace says so."""

from __future__ import annotations

import threading
import time

from solbench.evaluation import evaluate
from solbench.evaluation.device_turn import timing_turn
from solbench.spec import load_problem
from tests.conftest import make_solution


def test_a_second_turn_on_a_device_waits_for_the_first_and_other_devices_do_not():
    events: list[str] = []
    with timing_turn("cpu"):
        waiter = threading.Thread(target=lambda: _take("cpu", events))
        waiter.start()
        with timing_turn("cuda:0") as other:  # another device's turn is free meanwhile
            assert other.waited_s < 0.5
        time.sleep(0.3)
        events.append("released")
    waiter.join(timeout=10)
    assert events == ["released", "cpu turn"]


def _take(device: str, events: list[str]) -> None:
    with timing_turn(device) as turn:
        assert turn.waited_s >= 0.25
        events.append(f"{device} turn")


def test_an_evaluation_times_only_in_its_turn_and_records_the_wait_and_the_load(vector_add_problem, fast_config):
    """Correctness rounds run while another evaluation holds the turn; warm-up and timed calls wait for it."""
    solution = make_solution("import time\ndef run(x, y):\n    print('at', time.monotonic())\n    return x + y\n")
    traces: list = []
    with timing_turn(fast_config.device):
        worker = threading.Thread(
            target=lambda: traces.extend(evaluate(load_problem(vector_add_problem), solution, fast_config))
        )
        worker.start()
        time.sleep(3.0)
        released = time.monotonic()
    worker.join(timeout=120)
    first = traces[0].evaluation
    assert first.status.value == "PASSED", first.log
    stamps = [float(line.split()[1]) for line in first.log.splitlines() if line.startswith("at ")]
    correctness, timed = stamps[: fast_config.rounds], stamps[fast_config.rounds :]
    assert timed and min(timed) >= released, (released, stamps)
    assert first.solbench.timing.device_wait_s > 0 and first.solbench.timing.load_average is not None
    if max(correctness) < released - 0.5:  # the rounds were done well before: the whole wait was for the turn
        assert first.solbench.timing.device_wait_s > released - max(correctness) - 0.5
