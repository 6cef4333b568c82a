"""The trusted side: inputs, reference, correctness, sandbox sessions and the evaluation loop."""

from solbench.evaluate.config import EvaluationConfig, default_memory_limit_bytes
from solbench.evaluate.errors import HarnessOptionError
from solbench.evaluate.evaluator import evaluate
from solbench.evaluate.pool import SandboxPool, warm_sandboxes
from solbench.evaluate.reference_timing import ReferenceTimings

__all__ = ["EvaluationConfig", "HarnessOptionError", "ReferenceTimings", "SandboxPool", "default_memory_limit_bytes",
           "evaluate", "warm_sandboxes"]

# `solbench.evaluate(problem, solution)` is the public API's evaluate (see solbench/callable_package.py).
from solbench.callable_package import forward_calls_to_api  # noqa: E402

forward_calls_to_api(__name__)
