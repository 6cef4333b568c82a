"""Errors of the service that a user or an operator can fix; each names what is at fault."""

from __future__ import annotations

from solbench.errors import SolbenchError


class ServiceError(SolbenchError):
    """A service request or setting cannot be carried out (an unknown user, a bad database URL, ...)."""


class RequestRejected(ServiceError):
    """What the server answered to a request it refused: the HTTP status and its message (client side)."""

    def __init__(self, status: int, message: str, retry_after: float | None = None):
        self.status = status
        self.retry_after = retry_after
        super().__init__(f"server answered {status}: {message}")
