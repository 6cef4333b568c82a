"""Errors of `solbench suite import` and `suite fetch`: each names the file (and row or field) at fault."""

from __future__ import annotations

from solbench.errors import SolbenchError


class ImportSourceError(SolbenchError):
    """The data set given to `suite import` cannot be read: a missing column, a bad JSON cell, no problems."""


class FetchError(SolbenchError):
    """`suite fetch` could not download the data set (no network, unknown revision, missing package)."""
