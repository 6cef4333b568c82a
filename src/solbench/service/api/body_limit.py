"""Refuse a request body over the size limit before any handler reads it (HTTP 413, naming `body`), so that
every client reads the 413.

The 413 is sent as soon as the body is known to be too large; then the rest of the body is read and dropped,
and only then is the response ended and the connection closed (`Connection: close`). A client that sends its
whole body before reading (urllib, httpx, most scripts) would otherwise still be sending when the server closes:
closing a socket with unread data in it sends a TCP reset, and such a client sees ECONNRESET or EPIPE instead of
the answer (urllib, which says `Connection: close`, sent 20 MB to `solbench serve` and got a reset or a broken
pipe). The drain is bounded, so a client cannot make the server read forever: at most `drain_bytes` more bytes
and `drain_s` seconds (memory stays at uvicorn's read buffer: each piece is dropped as it arrives). A body past
either bound still has its 413 sent first; a client that reads the answer after a failed write (httpx, curl)
sees it, others may see a reset.
"""

from __future__ import annotations

import json

DRAIN_BYTES = 32 * 1024 * 1024
"""After a 413, the most of the rest of the body the server reads and drops before it closes the connection."""
DRAIN_S = 10.0
"""After a 413, the longest the server keeps reading and dropping the rest of the body."""


class BodyLimit:
    """ASGI middleware: a body over `max_bytes` (by Content-Length, or counted as it arrives) is answered 413."""

    def __init__(self, app, max_bytes: int, *, drain_bytes: int = DRAIN_BYTES, drain_s: float = DRAIN_S):
        self.app = app
        self.max_bytes = max_bytes
        self.drain_bytes = drain_bytes
        self.drain_s = drain_s

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            # A client waiting for "100 Continue" sends no body after a final answer: nothing to drain.
            waits = headers.get(b"expect", b"").lower() == b"100-continue"
            await self._refuse(
                receive, send, f"{int(length)} bytes is over the limit of {self.max_bytes} bytes", body_left=not waits
            )
            return
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, receive, send)  # a disconnect: let the app see it
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > self.max_bytes:
                told = (
                    f"over the limit of {self.max_bytes} bytes (refused after {size} bytes)"
                    if more
                    else f"{size} bytes is over the limit of {self.max_bytes} bytes"
                )
                await self._refuse(receive, send, told, body_left=more)
                return
            if not more:
                break
        body = b"".join(chunks)
        delivered = False

        async def replay():
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, receive, send, told: str, *, body_left: bool) -> None:
        """Send the 413 whole, drain what is left of the body (bounded), then end the response, which closes."""
        payload = json.dumps({"detail": f"body: {told}", "field": "body"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload, "more_body": True})
        if body_left:
            await self._drain(receive)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _drain(self, receive) -> None:
        """Read and drop the rest of the body: until it ends or the client goes, at most `drain_bytes` and
        `drain_s`."""
        import anyio

        dropped = 0
        with anyio.move_on_after(self.drain_s):
            while dropped <= self.drain_bytes:
                message = await receive()
                if message["type"] != "http.request" or not message.get("more_body", False):
                    return
                dropped += len(message.get("body", b""))
