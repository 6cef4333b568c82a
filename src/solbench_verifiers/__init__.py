"""The verifiers taskset `solbench-verifiers` (`--env.taskset.id solbench-verifiers`).

verifiers finds a taskset, and its default harness, by importing a top-level package named after the id and taking
the subclasses its `__all__` exports; the taskset itself is solbench.service.verifiers_env (docs/agent-env.md).
"""

from solbench.service.verifiers_env import KernelTaskset, SolutionReplyHarness

__all__ = ["KernelTaskset", "SolutionReplyHarness"]
