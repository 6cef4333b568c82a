"""Errors of the service that a user or an operator can fix; each names what is at fault."""

from __future__ import annotations

from solbench.errors import SolbenchError


class ServiceError(SolbenchError):
    """A service request or setting cannot be carried out (an unknown user, a bad database URL, ...)."""


class ServerRefused(ServiceError):
    """What the server answered to a request it refused: the HTTP status and its message (client side)."""

    def __init__(self, status: int, message: str, retry_after: float | None = None):
        self.status = status
        self.message = message
        self.retry_after = retry_after
        super().__init__(f"server answered {status}: {message}")


class BodyTooLarge(ServiceError):
    """A request body over the server's published `max_body_bytes`, found before sending it (client side)."""

    def __init__(self, size_bytes: int, limit_bytes: int, server: str):
        self.size_bytes = size_bytes
        self.limit_bytes = limit_bytes
        self.server = server
        super().__init__(
            f"{size_bytes} bytes to send, over the limit of {limit_bytes} bytes of {server}; nothing was sent"
        )


class UnknownSubmission(ServiceError):
    """No live submission has this id (never made, or deleted)."""

    def __init__(self, submission_id: int):
        self.submission_id = submission_id
        super().__init__(f"ID {submission_id}: no such submission (deleted ones cannot be flagged either)")
