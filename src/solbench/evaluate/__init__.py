"""The trusted side: inputs, reference, correctness, sandbox sessions and the evaluation loop."""

from solbench.evaluate.config import EvaluationConfig, default_memory_limit_bytes
from solbench.evaluate.errors import HarnessOptionError
from solbench.evaluate.evaluator import evaluate

__all__ = ["EvaluationConfig", "HarnessOptionError", "default_memory_limit_bytes", "evaluate"]

# `solbench.evaluate(problem, solution)` is the public API's evaluate (see solbench/callable_package.py).
from solbench.callable_package import forward_calls_to_api  # noqa: E402

forward_calls_to_api(__name__)
