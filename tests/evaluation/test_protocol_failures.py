"""A reply that breaks the sandbox protocol is the solution's failure, recorded per workload; the harness goes on."""

from dataclasses import replace

import pytest

from conftest import make_solution
from solbench.evaluation import evaluate
from solbench.spec import load_problem
from solbench.spec.trace import EvaluationStatus

FORGED_REPLY = """
import os, socket, sys
from solbench.sandbox.wire import send_message

def run(x, y):
    channel = socket.socket(fileno=os.dup(int(sys.argv[sys.argv.index("--fd") + 1])))
    send_message(channel, {FORGED})  # ahead of the sandbox's own reply
    return x + y
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "forged, reason",
    [
        (
            '{"ok": True, "outputs": [x + y]}',
            "malformed reply: message: Unable to extract tag using discriminator 'kind'",
        ),
        (
            '{"kind": "called", "outputs": [x + y], "devices": ["cpu"], "mutated_inputs": [], "seconds": 0.0, '
            '"ok": True}',
            "malformed reply: called.ok: Extra inputs are not permitted",
        ),
        (
            '{"kind": "timed", "backend": "cpu_monotonic", "samples_s": [1e-9], "warmup": 0, "flush_bytes": 0, '
            '"flush_mode": "none", "flush_note": None, "resolution_s": None, "captured": [], "warnings": []}',
            "a 'timed' reply to a 'call' request",
        ),
    ],
)
def test_a_forged_reply_is_a_runtime_error_naming_what_is_wrong(vector_add_problem, fast_config, forged, reason):
    solution = make_solution(FORGED_REPLY.replace("{FORGED}", forged))
    traces = evaluate(load_problem(vector_add_problem), solution, replace(fast_config, static_check=False))
    assert [t.evaluation.status for t in traces] == [EvaluationStatus.RUNTIME_ERROR] * 2
    assert all(reason in t.evaluation.solbench.failure for t in traces), traces[0].evaluation.solbench.failure
