"""The profile a sandbox reports: torch.profiler's ops summarised, bounded by the protocol (the sandbox may write
anything there)."""

from __future__ import annotations

import pytest
import torch

from solbench.sandbox import protocol
from solbench.sandbox.profiling import profile_calls
from solbench.sandbox.protocol import Profiled, ProfileRequest


def test_the_top_ops_of_the_solution_s_calls_most_first_and_not_the_harness_s_input_loading():
    x = torch.randn(200_000)
    loads = []

    def invoke():
        return torch.sin(x).add_(x)

    def prepare(index):
        loads.append(index)
        torch.empty(1_000_000).copy_(torch.ones(1_000_000))  # the harness's copy: before the profiler starts

    profiled = profile_calls(ProfileRequest(calls=3, top=5), invoke, prepare, "cpu", lambda work: work())
    names = [op.name for op in profiled.ops]
    assert profiled.activity == "cpu" and loads == [0] and "aten::sin" in names and "aten::copy_" not in names
    assert [op.self_s for op in profiled.ops] == sorted((op.self_s for op in profiled.ops), reverse=True)
    assert 0 < sum(op.self_s for op in profiled.ops) <= profiled.total_s * (1 + 1e-9) and len(profiled.ops) <= 5
    sin = next(op for op in profiled.ops if op.name == "aten::sin")
    assert sin.calls == 3


def test_a_solution_that_raises_while_profiled_fails_as_in_any_call():
    def invoke():
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        profile_calls(ProfileRequest(calls=1, top=5), invoke, lambda index: None, "cpu", lambda work: work())


@pytest.mark.parametrize(
    "reply",
    [
        {
            "kind": "profiled",
            "activity": "cpu",
            "total_s": 1.0,
            "ops": [{"name": "x" * 201, "self_s": 0.1, "calls": 1}],
        },
        {"kind": "profiled", "activity": "cpu", "total_s": 1.0, "ops": [{"name": "x", "self_s": 0.1, "calls": 1}] * 51},
        {"kind": "profiled", "activity": "cpu", "total_s": -1.0, "ops": []},
        {"kind": "profiled", "activity": "tpu", "total_s": 1.0, "ops": []},
    ],
    ids=["long name", "too many ops", "negative time", "unknown activity"],
)
def test_a_profile_reply_out_of_bounds_is_the_sandbox_s_failure(reply):
    with pytest.raises(protocol.ProtocolError, match="malformed reply"):
        protocol.parse_reply(reply, ProfileRequest(calls=1, top=10))
    assert isinstance(
        protocol.parse_reply(
            {"kind": "profiled", "activity": "cpu", "total_s": 1.0, "ops": []}, ProfileRequest(calls=1, top=10)
        ),
        Profiled,
    )
