"""Errors of the speed-of-light analyzer."""

from solbench.errors import SolbenchError


class AnalysisError(SolbenchError):
    """The reference could not be analysed at all (it failed even on real inputs)."""


class ValuesNeeded(AnalysisError):
    """The fake run met an op whose cost depends on input values: the reference must run on real inputs."""


class DataDependentOp(ValuesNeeded):
    """A shape-only run met an op whose output is a value of its input (`item`) or whose output's shape depends on
    its input's values (`nonzero`, `bincount`). Fake tensors without a shape environment, as the analysis makes
    them, refuse the same op whatever its inputs (but one-element tensors made from Python data, whose values they
    keep: not raised for those): the analysis goes straight to values."""


class SliceOverBudget(ValuesNeeded):
    """The values a value-dependent op needs come from a slice of the reference too large to run for real
    (sol/slices.py). Unlike other `ValuesNeeded`, it says nothing of the problem's other workloads: a smaller one's
    slice may fit."""
