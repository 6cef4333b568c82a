"""Errors of the runner layer."""

from solbench.errors import SolbenchError


class RunError(SolbenchError):
    """A job of a run could not be carried out (its worker process died)."""
