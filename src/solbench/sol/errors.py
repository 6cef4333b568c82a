"""Errors of the speed-of-light analyzer."""

from solbench.errors import SolbenchError


class AnalysisError(SolbenchError):
    """The reference could not be analysed at all (it failed even on real inputs)."""


class ValuesNeeded(AnalysisError):
    """The fake run met an op whose cost depends on input values: the reference must run on real inputs."""


class SliceOverBudget(ValuesNeeded):
    """The values a value-dependent op needs come from a slice of the reference too large to run for real
    (sol/slices.py). Unlike other `ValuesNeeded`, it says nothing of the problem's other workloads: a smaller one's
    slice may fit."""
