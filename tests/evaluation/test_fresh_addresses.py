"""Through a real sandbox: no correctness or timed call sees an address an earlier one saw, and an output handed
back from an earlier call is refused (addresses.py)."""

from __future__ import annotations

import pytest

from solbench.evaluation import evaluate
from solbench.spec import load_problem
from tests.conftest import make_solution

# Computes the right answer only at addresses it never saw in this workload (each has its own slab): the first
# repeat, among its inputs or its destination buffer, makes every later result wrong. Warm-up calls may repeat
# theirs; they are never checked.
_POINTER_DETECTOR = """
import torch
seen, repeated, calls = set(), False, 0
def run(x, y{dps_out}):
    global repeated, calls
    calls += 1
    if calls > 1 and x.numel() not in {{n for n, _ in seen}}:  # the next workload: a fresh count
        calls = 1
    pointers = {{(x.numel(), p) for p in (x.data_ptr(), y.data_ptr(){dps_ptr})}}
    timed_or_checked = calls <= {rounds} or calls > {rounds} + {warmups}
    if timed_or_checked:
        repeated = repeated or bool(seen & pointers)
        seen.update(pointers)
    result = x + y + (1.0 if repeated else 0.0)
    {finish}
"""


@pytest.mark.parametrize("dps", [False, True], ids=["returning", "dps"])
def test_no_checked_or_timed_call_sees_an_address_an_earlier_one_saw(vector_add_problem, fast_config, dps):
    source = _POINTER_DETECTOR.format(
        dps_out=", z" if dps else "",
        dps_ptr=", z.data_ptr()" if dps else "",
        rounds=fast_config.rounds,
        warmups=fast_config.timing.min_warmup,
        finish="z.copy_(result)" if dps else "return result",
    )
    traces = evaluate(load_problem(vector_add_problem), make_solution(source, dps=dps), fast_config)
    for trace in traces:
        assert trace.evaluation.status.value == "PASSED", trace.evaluation.log
        assert len(trace.evaluation.solbench.timing.samples_ms) >= fast_config.timing.min_iterations


@pytest.mark.parametrize(
    "source",
    [
        # The same tensor, recomputed in place: right values, but the caller's earlier result changes under it.
        "import torch\nkept = []\ndef run(x, y):\n    if not kept:\n        kept.append(torch.empty_like(x))\n"
        "    torch.add(x, y, out=kept[0])\n    return kept[0]\n",
        # A new view each call of one workspace the solution keeps.
        "import torch\nspace = []\ndef run(x, y):\n    if not space:\n"
        "        space.append(torch.empty(2 * x.numel()))\n    out = space[0][: x.numel()]\n"
        "    torch.add(x, y, out=out)\n    return out.view(x.shape)\n",
    ],
    ids=["same-tensor", "view-of-a-kept-workspace"],
)
def test_an_output_returned_again_is_refused_naming_the_rule(vector_add_problem, fast_config, source):
    trace = evaluate(load_problem(vector_add_problem), make_solution(source), fast_config)[0]
    assert trace.evaluation.status.value == "REWARD_HACK", trace.evaluation.log
    assert trace.evaluation.solbench.failed_rule == "output_replay"
    assert "earlier call returned" in trace.evaluation.log
