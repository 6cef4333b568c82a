"""The trusted side: inputs, reference, correctness, sandbox sessions and the evaluation loop."""

from solbench.evaluation.config import EvaluationConfig, default_memory_limit_bytes
from solbench.evaluation.errors import HarnessOptionError
from solbench.evaluation.evaluator import evaluate
from solbench.evaluation.pool import SandboxPool, warm_sandboxes
from solbench.evaluation.reference_timing import ReferenceTimings

__all__ = [
    "EvaluationConfig",
    "HarnessOptionError",
    "ReferenceTimings",
    "SandboxPool",
    "default_memory_limit_bytes",
    "evaluate",
    "warm_sandboxes",
]
