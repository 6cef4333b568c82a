"""Errors of the trusted evaluation layer."""

from solbench.errors import SolbenchError


class EvaluationError(SolbenchError):
    """Evaluation could not go on as asked (a failing reference, a workload ended early); most become a trace
    status inside `evaluate` and never reach the caller."""
