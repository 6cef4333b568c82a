"""The private channel's framing: a JSON header plus raw tensor bytes, never pickle.

The trusted parent decodes what the untrusted child sends, so the format admits only JSON values
and tensors of a known dtype whose byte count matches their shape. A frame is
``8-byte header length | header JSON | blob 0 | blob 1 | ...`` where the header lists blob sizes.
"""

from __future__ import annotations

import json
import math
import socket
import struct
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import torch

_LENGTH = struct.Struct("!Q")
_TENSOR_KEY = "__tensor__"
_FLOAT_KEY = "__float__"


class WireError(Exception):
    """A frame is malformed, too large, or the peer closed the channel.

    Not a SolbenchError: from the sandbox it is the solution's failure (a trace status); in the
    sandbox it means the parent went away."""


def _encode_value(value: Any, blobs: list[Any]) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        flat = value.detach().contiguous().cpu().reshape(-1)
        blobs.append(flat.view(torch.uint8).numpy() if flat.numel() else b"")
        return {
            _TENSOR_KEY: len(blobs) - 1,
            "dtype": str(value.dtype).removeprefix("torch."),
            "shape": list(value.shape),
        }
    if isinstance(value, float) and not math.isfinite(value):
        return {_FLOAT_KEY: repr(value)}
    if isinstance(value, dict):
        return {str(k): _encode_value(v, blobs) for k, v in cast("dict[Any, Any]", value).items()}
    if isinstance(value, (list, tuple)):
        return [_encode_value(v, blobs) for v in cast("list[Any] | tuple[Any, ...]", value)]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot send a {type(value).__name__} over the channel")


def _decode_value(value: Any, blobs: list[memoryview], used: list[Any]) -> Any:
    """`value` with its tensors rebuilt from `blobs`; `used` collects the blob index each tensor took."""
    if isinstance(value, dict):
        if _TENSOR_KEY in value:
            used.append(cast("dict[str, Any]", value)[_TENSOR_KEY])  # checked in _decode_tensor
            return _decode_tensor(cast("dict[str, Any]", value), blobs)
        if _FLOAT_KEY in value:
            return float(cast("dict[str, Any]", value)[_FLOAT_KEY])
        return {k: _decode_value(v, blobs, used) for k, v in cast("dict[str, Any]", value).items()}
    if isinstance(value, list):
        return [_decode_value(v, blobs, used) for v in cast("list[Any]", value)]
    return value


def _decode_tensor(meta: dict[str, Any], blobs: list[memoryview]) -> torch.Tensor:
    import torch

    from solbench.spec.dtypes import DTYPES

    dtype_name: Any = meta.get("dtype")
    shape: Any = meta.get("shape")
    index: Any = meta.get(_TENSOR_KEY)
    known = {d.torch_name for d in DTYPES.values()}
    if dtype_name not in known or not hasattr(torch, dtype_name):
        raise WireError(f"tensor of unsupported dtype {dtype_name!r}")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in cast("list[Any]", shape)):
        raise WireError(f"tensor with invalid shape {shape!r}")
    shape = cast("list[int]", shape)
    if not isinstance(index, int) or not 0 <= index < len(blobs):
        raise WireError("tensor refers to a missing blob")
    dtype = getattr(torch, dtype_name)
    blob = blobs[index]
    if len(blob) != math.prod(shape) * dtype.itemsize:
        raise WireError(f"tensor bytes ({len(blob)}) do not match shape {shape} of {dtype_name}")
    if not len(blob):
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(blob), dtype=torch.uint8).view(dtype).reshape(shape)


def send_message(sock: socket.socket, message: Any) -> None:
    blobs: list[Any] = []
    body = _encode_value(message, blobs)
    views = [memoryview(b).cast("B") if not isinstance(b, bytes) else memoryview(b) for b in blobs]
    header = json.dumps({"body": body, "blobs": [len(v) for v in views]}).encode()
    sock.sendall(_LENGTH.pack(len(header)) + header)
    for view in views:
        sock.sendall(view)


def _receive_exactly(sock: socket.socket, size: int) -> memoryview:
    buffer = bytearray(size)
    view = memoryview(buffer)
    received = 0
    while received < size:
        try:
            count = sock.recv_into(view[received:], min(size - received, 1 << 24))
        except ConnectionError as error:  # a peer that died with unread data resets the channel
            raise WireError(f"channel closed by the other side ({error.strerror})") from None
        if count == 0:
            raise WireError("channel closed by the other side")
        received += count
    return view


def receive_message(sock: socket.socket, max_bytes: int = 1 << 36) -> Any:
    """Read one frame; refuses frames over `max_bytes` so a hostile peer cannot exhaust memory."""
    (header_size,) = _LENGTH.unpack(_receive_exactly(sock, _LENGTH.size))
    if header_size > min(max_bytes, 1 << 26):
        raise WireError(f"header of {header_size} bytes is too large")
    try:
        header = json.loads(bytes(_receive_exactly(sock, header_size)))
        sizes: Any = header["blobs"]
        body = header["body"]
    except (ValueError, KeyError, TypeError, RecursionError) as error:  # a header nested past the recursion limit
        raise WireError(f"malformed header: {error}") from None
    if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in cast("list[Any]", sizes)):
        raise WireError("malformed blob sizes")
    sizes = cast("list[int]", sizes)
    if sum(sizes) > max_bytes:
        raise WireError(f"message of {sum(sizes)} bytes exceeds the limit of {max_bytes}")
    blobs = [_receive_exactly(sock, s) if s else memoryview(b"") for s in sizes]
    used: list[Any] = []
    try:
        message = _decode_value(body, blobs, used)
    except (ValueError, TypeError, RecursionError) as error:  # {"__float__": "not a number"}: the peer's failure
        raise WireError(f"malformed value: {error}") from None
    if sorted(used) != list(range(len(blobs))):
        # a blob no tensor takes would carry the next frame's bytes: a writer on the channel swallowing the harness's
        # own message (a streamed timing sample) into a frame of its own
        raise WireError("blobs that no tensor of the message refers to, or one referred to twice")
    return message
