"""Bounded capture of what the sandbox prints: kept as log text, never parsed."""

from __future__ import annotations


class BoundedLog:
    """Keeps the first `head_bytes` and last `tail_bytes` of everything since the last `take()`."""

    def __init__(self, head_bytes: int = 16 << 10, tail_bytes: int = 48 << 10):
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self._reset()

    def _reset(self) -> None:
        self._head = bytearray()
        self._tail = bytearray()
        self._dropped = 0

    def write(self, data: bytes) -> None:
        room = self.head_bytes - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data
        excess = len(self._tail) - self.tail_bytes
        if excess > 0:
            del self._tail[:excess]
            self._dropped += excess

    def take(self) -> str:
        text = self._head.decode("utf-8", "replace")
        if self._dropped:
            text += f"\n[... {self._dropped} bytes of output dropped ...]\n"
        text += self._tail.decode("utf-8", "replace")
        self._reset()
        return text
