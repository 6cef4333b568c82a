"""The reach layer's one error type: a model, rules file, problems folder or speedup source the user can fix."""

from solbench.errors import SolbenchError


class ReachError(SolbenchError):
    """Bad input to `solbench reach`, named with the file or option to change."""
