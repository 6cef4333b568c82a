"""The trusted side: inputs, reference, correctness, sandbox sessions and the evaluation loop."""

from solbench.evaluate.config import EvaluationConfig, default_memory_limit_bytes
from solbench.evaluate.errors import HarnessOptionError
from solbench.evaluate.evaluator import evaluate

__all__ = ["EvaluationConfig", "HarnessOptionError", "default_memory_limit_bytes", "evaluate"]
