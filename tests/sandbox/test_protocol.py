"""The sandbox protocol: every message survives the channel, and a reply the parent did not ask for is refused."""

import socket
import threading

import pytest
import torch
from pydantic import ValidationError

from solbench.sandbox import protocol
from solbench.sandbox.measure import TimingPlan
from solbench.sandbox.protocol import (
    BuildRequest,
    Built,
    Called,
    CallRequest,
    CapturedOutputs,
    ExitRequest,
    FreshInput,
    GuardTripped,
    Loaded,
    LoadRequest,
    OutputDescription,
    ProtocolError,
    SandboxState,
    SolutionFailed,
    Timed,
    TimeRequest,
)
from solbench.sandbox.wire import receive_message, send_message


def _through_channel(message):
    left, right = socket.socketpair()
    with left, right:
        sender = threading.Thread(target=send_message, args=(left, protocol.encode(message)))
        sender.start()
        received = receive_message(right)
        sender.join()
    return received


REQUESTS = [
    BuildRequest(solution={"name": "s", "sources": [{"path": "k.py", "content": "def run(x): return x"}]}),
    LoadRequest(
        sets=[[torch.arange(6.0).reshape(2, 3), 3, 0.5, True, None]],
        perturbations=["multiply"] + ["keep"] * 4,
        outputs=[
            OutputDescription(name="y", shape=[2, 3], dtype="float32"),
            OutputDescription(name="s", shape=None, dtype="int64"),
        ],
    ),
    CallRequest(input_set=1),
    TimeRequest(plan=TimingPlan(budget_s=0.5, capture=True, perturb_seed=7), timer="cpu_monotonic", flush=False),
    ExitRequest(),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: r.kind)
def test_every_request_survives_the_channel(request_):
    received = protocol.parse_request(_through_channel(request_))
    assert type(received) is type(request_)
    if isinstance(request_, LoadRequest):
        assert torch.equal(received.sets[0][0], request_.sets[0][0]) and received.sets[0][1:] == [3, 0.5, True, None]
        assert received.outputs == request_.outputs
    else:
        assert received == request_


def test_a_call_with_fresh_inputs_survives_the_channel():
    request = CallRequest(input_set=0, fresh_inputs=[FreshInput(index=1, value=torch.rand(4))])
    received = protocol.parse_request(_through_channel(request))
    assert isinstance(received, CallRequest) and received.fresh_inputs[0].index == 1
    assert torch.equal(received.fresh_inputs[0].value, request.fresh_inputs[0].value)
    with pytest.raises(protocol.ProtocolError, match="fresh_inputs"):
        protocol.parse_request({"kind": "call", "input_set": 0, "fresh_inputs": [{"index": 1, "value": [0.5]}]})


def test_a_reply_survives_the_channel_with_its_tensors():
    timed = Timed(
        backend="cpu_monotonic",
        samples_s=[1e-3, 2e-3],
        warmup=3,
        flush_bytes=64,
        flush_mode="operands",
        flush_note=None,
        resolution_s=None,
        captured=[CapturedOutputs(iteration=1, outputs=[torch.ones(2, dtype=torch.bfloat16)], devices=["cpu"])],
        warnings=[],
    )
    received = protocol.parse_reply(_through_channel(timed), TimeRequest(plan=TimingPlan(), timer=None, flush=True))
    assert received.samples_s == [1e-3, 2e-3] and received.captured[0].iteration == 1
    assert torch.equal(received.captured[0].outputs[0], timed.captured[0].outputs[0])


CALLED = {"kind": "called", "outputs": [torch.ones(2)], "devices": ["cpu"], "mutated_inputs": [], "seconds": 0.1}


@pytest.mark.parametrize(
    "reply, reason",
    [
        ({**CALLED, "ok": True}, "called.ok: Extra inputs are not permitted"),
        ({k: v for k, v in CALLED.items() if k != "devices"}, "called.devices: Field required"),
        ({**CALLED, "seconds": "0.1"}, "called.seconds: Input should be a valid number"),
        ({**CALLED, "seconds": -1.0}, "called.seconds: Input should be greater than or equal to 0"),
        ({**CALLED, "outputs": [[1.0, 2.0]]}, "called.outputs.0: Value error, expected a plain torch.Tensor"),
        ({**CALLED, "kind": "forged"}, "does not match any of the expected tags"),
        ({"ok": True, "outputs": []}, "Unable to extract tag using discriminator 'kind'"),
        ([CALLED], "valid dictionary"),
        (
            {
                "kind": "timed",
                "backend": "cpu_monotonic",
                "samples_s": [],
                "warmup": 0,
                "flush_bytes": 0,
                "resolution_s": None,
                "captured": [],
                "warnings": [],
            },
            "samples_s: List should have at least 1 item",
        ),
        (
            {
                "kind": "built",
                "seconds": 1.0,
                "state": {"network_namespace": None, "uid": 0, "filesystem_confined": "yes", "capabilities": None},
            },
            "filesystem_confined: Input should be a valid boolean",
        ),
    ],
)
def test_a_malformed_reply_is_refused_with_where_and_why(reply, reason):
    with pytest.raises(ProtocolError, match=f"malformed reply: .*{reason}"):
        protocol.parse_reply(reply, CallRequest(input_set=0))


def test_a_valid_reply_to_another_request_is_refused():
    with pytest.raises(ProtocolError, match="a 'called' reply to a 'time' request"):
        protocol.parse_reply(CALLED, TimeRequest(plan=TimingPlan(), timer=None, flush=True))
    assert isinstance(protocol.parse_reply(CALLED, CallRequest(input_set=0)), Called)


@pytest.mark.parametrize("failure", [GuardTripped(rule="integrity", error="x"), SolutionFailed(error="boom")])
def test_a_failure_answers_any_request(failure):
    for request in (
        BuildRequest(solution={}),
        LoadRequest(sets=[], perturbations=[], outputs=[]),
        CallRequest(input_set=0),
    ):
        assert protocol.parse_reply(protocol.encode(failure), request) == failure


def test_a_malformed_request_is_named():
    with pytest.raises(ProtocolError, match="malformed request: time.plan.bogus: Unexpected keyword argument"):
        protocol.parse_request({"kind": "time", "plan": {"bogus": 1}, "timer": None, "flush": True})
    with pytest.raises(ProtocolError, match="malformed request: call.input_set: Input should be greater than"):
        protocol.parse_request({"kind": "call", "input_set": -1})


def test_each_reply_answers_its_request_kind():
    replies = {
        "build": Built(
            seconds=1.0, state=SandboxState(network_namespace=None, uid=0, filesystem_confined=False, capabilities=None)
        ),
        "load": Loaded(),
        "call": Called(**{k: v for k, v in CALLED.items() if k != "kind"}),
    }
    for request in REQUESTS[:3]:
        assert protocol.parse_reply(protocol.encode(replies[request.kind]), request) == replies[request.kind]


def test_messages_are_frozen():
    with pytest.raises(ValidationError, match="frozen"):
        CallRequest(input_set=0).input_set = 1


def test_the_sandbox_answers_a_malformed_request_with_a_rejection_and_keeps_serving():
    from types import SimpleNamespace

    from solbench.sandbox.child import serve

    def never(request):
        raise AssertionError("a malformed request reached a handler")

    server = SimpleNamespace(build=never, load=never, call=never, time=never, profile=never)
    parent, child = socket.socketpair()
    with parent, child:
        serving = threading.Thread(target=serve, args=(child, server))
        serving.start()
        send_message(parent, {"kind": "call", "set": 0})  # the field is input_set
        reply = protocol.parse_reply(receive_message(parent), CallRequest(input_set=0))
        send_message(parent, protocol.encode(ExitRequest()))
        serving.join(timeout=10)
    assert isinstance(reply, protocol.RequestRejected) and not serving.is_alive()
    assert "call.input_set: Field required" in reply.error and "call.set: Extra inputs" in reply.error
