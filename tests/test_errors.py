"""Every exception a user can fix derives from SolbenchError (the CLI's one-line, exit-2 boundary); the
others are named here, each one a solution's failure that becomes a trace status or a harness bug."""

import importlib
import inspect
import pkgutil

import pytest

import solbench
from solbench.errors import SolbenchError

# Not user errors, on purpose: were they SolbenchErrors, a solution's failure could reach the CLI as
# "bad input" (exit 2) instead of becoming its trace's status. A harness option that names a missing
# timer is HarnessOptionError (a SolbenchError); TimerUnavailable is what the sandbox reports.
INTERNAL = {
    "solbench.sandbox.builders.errors.BuildError",  # COMPILE_ERROR
    "solbench.sandbox.timers.TimerUnavailable",  # the sandbox's side of a timer it cannot start
    "solbench.sandbox.calling.OutputError",  # the solution's outputs are malformed
    "solbench.sandbox.wire.WireError",  # the channel carried something malformed
    "solbench.sandbox.protocol.ProtocolError",  # ... that is no valid message
    "solbench.guard.runtime.GuardViolation",  # REWARD_HACK
    "solbench.guard.runtime.IntegritySetupError",  # a harness bug: a protected object is missing
    "solbench.evaluation.session.SandboxFailure",  # RUNTIME_ERROR / TIMEOUT
    "solbench.service.jobs.InfrastructureError",  # a worker's failure outside the solution: the job is retried
    "solbench.service.jobs.Cancelled",  # control flow: the submission was deleted while it ran; its worker stops
    "solbench.service.web.pages.PageNotFound",  # becomes the web page's 404, saying what is missing
    # no operand flush here: the streaming flush runs, said in the trace
    "solbench.sandbox.line_flush.HelperUnavailable",
    "solbench.sol.hybrid._Nested",  # control flow: arguments nested deeper than a list take the general tree walk
    "solbench.sol.loops.LoopShortcutMismatch",  # control flow: the workload is recorded again without shortcuts
    "solbench.sol.loops._Unsupported",  # control flow: a loop state the shortcut cannot compare runs in full
    "solbench.sol.routed._Unslotted",  # control flow: a routed loop's recording that touches an unnamed tensor
    "solbench.suite.tier_check._ValuesNeeded",  # control flow: a shape-only tier check that needs values runs for real
    "solbench.evaluation.reference._OutOfMemory",  # the float64 golden run did not fit: a float32 golden stands in
    "solbench.evaluation.containment.ContainmentError",  # a harness fault (the evaluator thread kept a PID namespace)
}


OPTIONAL_EXTRAS = {"openenv", "verifiers"}
"""Packages of the `rl` extra, not in dev (their pins conflict with the lock): their adapters import them."""


def _exception_classes():
    for module_info in pkgutil.walk_packages(solbench.__path__, "solbench."):
        if module_info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(module_info.name)
        except ModuleNotFoundError as error:
            if (error.name or "").split(".")[0] in OPTIONAL_EXTRAS:  # an adapter for a package not installed here
                continue
            raise
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == module.__name__:
                yield f"{value.__module__}.{value.__qualname__}", value


@pytest.mark.slow  # imports every module (torch, transformers): about 8 s
def test_every_exception_derives_from_solbench_error():
    found = dict(_exception_classes())
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, SolbenchError))
    assert [name for name in outside if name not in INTERNAL] == []
    assert sorted(INTERNAL - set(outside)) == [], "an internal exception became a SolbenchError or was removed"
    assert len(found) > 15  # the walk did reach the layers
