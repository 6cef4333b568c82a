"""Errors of the hardware layer."""

from solbench.errors import SolbenchError


class HardwareError(SolbenchError):
    """Unknown hardware id, a malformed data file, or a missing local probe."""
