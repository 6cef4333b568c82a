"""The trusted side: inputs, reference, correctness, sandbox sessions and the evaluation loop."""

from solbench.evaluate.config import EvaluationConfig, default_memory_limit_bytes
from solbench.evaluate.evaluator import evaluate

__all__ = ["EvaluationConfig", "default_memory_limit_bytes", "evaluate"]
