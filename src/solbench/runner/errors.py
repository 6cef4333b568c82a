"""Errors of the runner layer."""

from solbench.errors import SolbenchError


class RunError(SolbenchError):
    """A job of a run could not be carried out (its worker process died)."""


class BrokerUnreachable(RunError):
    """The Celery broker of a distributed run does not answer (`solbench run --broker`, `solbench worker`)."""

    def __init__(self, url: str, reason: str):
        self.url, self.reason = url, reason
        super().__init__(f"--broker {url}: cannot reach the broker ({reason}); is redis-server running there?")
