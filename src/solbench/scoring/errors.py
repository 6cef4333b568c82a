"""Errors of the scoring layer."""

from solbench.errors import SolbenchError


class ScoreError(SolbenchError):
    """A baselines or traces file is malformed, or a score lacks what it needs."""
