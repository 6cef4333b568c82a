"""Errors of the runner layer."""

from __future__ import annotations

from pathlib import Path

from solbench.errors import SolbenchError


class RunError(SolbenchError):
    """A job of a run could not be carried out (its worker process died)."""


class BrokerUnreachable(RunError):
    """The Celery broker of a distributed run does not answer (`solbench run --broker`, `solbench worker`)."""

    def __init__(self, url: str, reason: str):
        self.url, self.reason = url, reason
        super().__init__(f"--broker {url}: cannot reach the broker ({reason}); is redis-server running there?")


class RunOptionError(SolbenchError):
    """An option of a suite run or a baseline measurement that the workflow cannot run with, raised before anything
    runs: a bad value, a missing one, or one that does not go with `conflicts_with`.

    `option` and `conflicts_with` are the parameters' names (``warm_sandboxes``, ``broker``) and `reason` what is
    wrong, so a front end can name its own flags.
    """

    def __init__(self, option: str, reason: str, conflicts_with: str | None = None):
        self.option, self.reason, self.conflicts_with = option, reason, conflicts_with
        super().__init__(f"{option}: {reason}")


class NoProblemsMatch(SolbenchError):
    """The suite folder holds no problem that the run's categories, names and limit select."""

    def __init__(self, suite: Path, categories: list[str], names: list[str]):
        self.suite, self.categories, self.names = suite, categories, names
        super().__init__(f"{suite}: no problems match (categories {categories or 'any'}, names {names or 'any'})")
