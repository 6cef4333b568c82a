"""The private channel's codec: round-trips values, refuses what a hostile child could send."""

import json
import socket
import struct
import threading

import pytest
import torch

from solbench.sandbox.wire import WireError, receive_message, send_message


def _round_trip(message):
    left, right = socket.socketpair()
    with left, right:
        sender = threading.Thread(target=send_message, args=(left, message))
        sender.start()
        received = receive_message(right)
        sender.join()
    return received


@pytest.mark.parametrize(
    "dtype",
    [
        torch.float32,
        torch.bfloat16,
        torch.float16,
        torch.int32,
        torch.int64,
        torch.bool,
        torch.float8_e4m3fn,
        torch.float64,
    ],
)
def test_tensors_round_trip_bit_exactly(dtype):
    value = (torch.randn(3, 5, 7) * 10).to(dtype)
    received = _round_trip({"t": value, "transposed": value.transpose(0, 2)})
    assert received["t"].dtype == dtype and received["t"].shape == value.shape
    assert torch.equal(received["t"].view(torch.uint8), value.view(torch.uint8))
    assert torch.equal(received["transposed"].view(torch.uint8), value.transpose(0, 2).contiguous().view(torch.uint8))


def test_plain_values_and_non_finite_floats():
    message = {
        "ok": True,
        "n": 3,
        "xs": [1.5, float("inf"), float("-inf")],
        "s": "text",
        "none": None,
        "empty": torch.empty(0, 4),
        "scalar": torch.tensor(2.5),
    }
    received = _round_trip(message)
    assert received["xs"][1] == float("inf") and received["xs"][2] == float("-inf")
    assert received["empty"].shape == (0, 4) and received["scalar"].item() == 2.5


def test_refuses_objects_it_cannot_encode():
    left, right = socket.socketpair()
    with left, right, pytest.raises(TypeError, match="cannot send a object"):
        send_message(left, {"x": object()})


def _raw_frame(header: dict, blobs: list[bytes]) -> bytes:
    encoded = json.dumps(header).encode()
    return struct.pack("!Q", len(encoded)) + encoded + b"".join(blobs)


@pytest.mark.parametrize(
    "header, blobs, reason",
    [
        (
            {"body": {"__tensor__": 0, "dtype": "float32", "shape": [4]}, "blobs": [8]},
            [b"\0" * 8],
            "do not match shape",
        ),
        ({"body": {"__tensor__": 0, "dtype": "object", "shape": [1]}, "blobs": [8]}, [b"\0" * 8], "unsupported dtype"),
        ({"body": {"__tensor__": 3, "dtype": "float32", "shape": [1]}, "blobs": [4]}, [b"\0" * 4], "missing blob"),
        ({"body": {"__tensor__": 0, "dtype": "float32", "shape": [-1]}, "blobs": [4]}, [b"\0" * 4], "invalid shape"),
        ({"nobody": 1}, [], "malformed header"),
        # a blob nothing refers to: room for the next frame's bytes, which a writer on the channel would swallow
        ({"body": {"kind": "sample", "index": 0, "seconds": 1e-6}, "blobs": [64]}, [b"\0" * 64], "no tensor"),
        (
            {"body": [{"__tensor__": 0, "dtype": "int32", "shape": [1]}] * 2, "blobs": [4, 4]},
            [b"\0" * 8],
            "referred to twice",
        ),
    ],
)
def test_rejects_forged_frames(header, blobs, reason):
    left, right = socket.socketpair()
    with left, right:
        left.sendall(_raw_frame(header, blobs))
        with pytest.raises(WireError, match=reason):
            receive_message(right)


def test_rejects_oversized_messages():
    left, right = socket.socketpair()
    with left, right:
        left.sendall(_raw_frame({"body": None, "blobs": [1 << 40]}, []))
        with pytest.raises(WireError, match="exceeds the limit"):
            receive_message(right, max_bytes=1 << 30)
