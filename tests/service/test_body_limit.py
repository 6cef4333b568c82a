"""A body over the size limit is answered 413, and every client reads that answer, however it sends: a raw socket,
urllib or httpx, with Content-Length or chunked, asking to close or not. uvicorn on 127.0.0.1 from a thread, with
the middleware around a one-route app (fast tier)."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.request

import pytest
from fastapi import FastAPI, Request

from service.conftest import ThreadServer
from solbench.service.api.body_limit import BodyLimit

LIMIT = 64 * 1024
BODY_BYTES = 20 * 1024 * 1024
"""Far over the limit and over what loopback's socket buffers hold (about 3 MB), so a server that closes as soon as
it answered leaves the client still sending; under the drain bound (32 MiB)."""
PIECE = b"x" * 65536
READ_BYTES = 512 * 1024
"""More than one body message can hold: uvicorn stops reading past 64 KiB buffered, and reads 256 KiB at a time."""
PATH = "/api/v1/submissions"


class Counted:
    """An ASGI app that counts the body bytes the server read for the app it wraps."""

    def __init__(self, app):
        self.app = app
        self.bytes_read = 0

    async def __call__(self, scope, receive, send):
        async def counted():
            message = await receive()
            self.bytes_read += len(message.get("body", b""))
            return message

        await self.app(scope, counted, send)


def _served(**bounds) -> ThreadServer:
    app = FastAPI()

    @app.post(PATH)
    async def submissions(request: Request):
        return {"bytes": len(await request.body())}

    counted = Counted(BodyLimit(app, max_bytes=LIMIT, **bounds))
    server = ThreadServer(counted)
    server.counted = counted
    return server


@pytest.fixture(scope="module")
def server():
    """The middleware with its default drain bounds (32 MiB, 10 s)."""
    with _served() as running:
        yield running


@pytest.fixture(scope="module")
def tight_server():
    """The middleware with small drain bounds (1 MiB, 0.5 s), to test that they hold."""
    with _served(drain_bytes=1024 * 1024, drain_s=0.5) as running:
        yield running


def _pieces(total: int):
    for start in range(0, total, len(PIECE)):
        yield PIECE[: min(len(PIECE), total - start)]


def _head(length: int | None, *, close: bool = False, expect: bool = False) -> bytes:
    lines = [
        f"POST {PATH} HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked",
    ]
    lines += ["Connection: close"] * close + ["Expect: 100-continue"] * expect
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _chunk(piece: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(piece), piece)


def _answer(sock: socket.socket) -> tuple[int, dict]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, json.loads(response.read())


def _raw(port: int, total: int, *, chunked: bool, close: bool) -> tuple[int, dict]:
    """Send the whole body, then read the answer: a send that fails (a reset) fails the test."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(_head(None if chunked else total, close=close))
        for piece in _pieces(total):
            sock.sendall(_chunk(piece) if chunked else piece)
        if chunked:
            sock.sendall(b"0\r\n\r\n")
        return _answer(sock)


def _urllib(port: int, total: int) -> tuple[int, dict]:
    """urllib sends `Connection: close` and its whole body before it reads."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{PATH}", data=b"x" * total, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _httpx_stream(port: int, total: int) -> tuple[int, dict]:
    import httpx

    response = httpx.post(f"http://127.0.0.1:{port}{PATH}", content=_pieces(total), timeout=30)
    return response.status_code, response.json()


CLIENTS = {
    "raw socket, Content-Length, Connection: close": lambda port, n: _raw(port, n, chunked=False, close=True),
    "raw socket, chunked, Connection: close": lambda port, n: _raw(port, n, chunked=True, close=True),
    "raw socket, Content-Length, keep-alive": lambda port, n: _raw(port, n, chunked=False, close=False),
    "urllib": _urllib,
    "httpx, a streamed (chunked) body": _httpx_stream,
}


@pytest.mark.parametrize("client", CLIENTS.values(), ids=CLIENTS.keys())
def test_a_client_that_sends_its_whole_body_before_reading_reads_the_413(server, client):
    status, answer = client(server.port, BODY_BYTES)
    assert status == 413, answer
    assert answer["field"] == "body" and f"over the limit of {LIMIT} bytes" in answer["detail"]


@pytest.mark.parametrize("chunked", [False, True], ids=["Content-Length", "chunked"])
def test_the_413_is_sent_as_soon_as_the_body_is_known_too_large(server, chunked):
    """A client that reads while it sends (curl) stops sending at once: the answer does not wait for the drain."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(_head(None if chunked else BODY_BYTES))
        sock.sendall(b"".join(_chunk(PIECE) if chunked else PIECE for _ in range(2)))  # 128 KiB of 20 MiB
        status, answer = _answer(sock)
    assert status == 413
    expected = (
        f"body: over the limit of {LIMIT} bytes (refused after"
        if chunked
        else f"body: {BODY_BYTES} bytes is over the limit of {LIMIT} bytes"
    )
    assert answer["detail"].startswith(expected), answer


def test_a_body_within_the_limit_reaches_the_app_whole(server):
    for chunked in (False, True):
        assert _raw(server.port, LIMIT, chunked=chunked, close=False) == (200, {"bytes": LIMIT})


def test_the_drain_stops_after_its_bytes_and_the_413_is_still_readable(tight_server):
    """50 MiB against a 1 MiB drain: the server reads about 1 MiB and closes. The client's send then fails, yet the
    413 sent before is read after it (as httpx does: it reads the answer after a failed write)."""
    import httpx

    total = 50 * 1024 * 1024
    with socket.create_connection(("127.0.0.1", tight_server.port), timeout=30) as sock:
        sent = 0
        sock.sendall(_head(total))
        with pytest.raises(OSError):  # reset or broken pipe: the server stopped reading
            for piece in _pieces(total):
                sent += sock.send(piece)
        status, answer = _answer(sock)
    assert status == 413 and answer["field"] == "body"
    assert sent < total
    assert tight_server.counted.bytes_read <= LIMIT + 1024 * 1024 + READ_BYTES
    response = httpx.post(f"{tight_server.url}{PATH}", content=b"x" * total, timeout=30)
    assert response.status_code == 413 and response.json()["field"] == "body"


def test_the_drain_stops_after_its_time_when_the_client_stalls(tight_server):
    """A client that declares 20 MiB, sends 128 KiB and stalls gets its 413 at once and the close after 0.5 s."""
    with socket.create_connection(("127.0.0.1", tight_server.port), timeout=5) as sock:
        started = time.monotonic()
        sock.sendall(_head(BODY_BYTES) + PIECE * 2)
        assert _answer(sock)[0] == 413
        try:
            closed = sock.recv(1) == b""
        except ConnectionResetError:
            closed = True
        waited_s = time.monotonic() - started
    assert closed and 0.4 < waited_s < 4, waited_s


def test_a_client_waiting_for_100_continue_gets_the_413_and_the_close_at_once(server):
    """It sends no body after a final answer: the server does not wait the drain's 10 s for one."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=3) as sock:
        sock.sendall(_head(BODY_BYTES, expect=True))
        received = b""
        while chunk := sock.recv(65536):  # until the server closes; a 3 s timeout fails the test
            received += chunk
    assert received.startswith(b"HTTP/1.1 413 "), received[:100]
    assert b"100 Continue" not in received
