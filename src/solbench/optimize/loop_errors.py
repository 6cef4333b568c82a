"""Errors of the optimisation loop (`solbench optimize`, `solbench test`, `solbench replay`)."""

from solbench.errors import SolbenchError


class LoopError(SolbenchError):
    """The loop cannot run as asked."""


class JournalError(LoopError):
    """A journal line is not a record this version writes (the file was edited, or is not a journal)."""


class WorkspaceError(LoopError):
    """The workspace folder cannot be used: it holds another run, or no run at all."""


class AgentError(LoopError):
    """An `--agent` value names no built-in agent (builtin:NAME) and is empty."""


class TestChannelError(LoopError):
    """`solbench test` found no running round to talk to, or got no answer in time."""

    __test__ = False
