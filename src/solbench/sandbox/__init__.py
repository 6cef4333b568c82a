"""The untrusted side: the sandbox process, builders per language, timers and the timing policy."""

from solbench.sandbox.calling import OutputError, OutputSpec, call_with_convention, normalize_outputs
from solbench.sandbox.measure import Measurement, TimingPlan, measure

__all__ = [
    "Measurement",
    "OutputError",
    "OutputSpec",
    "TimingPlan",
    "call_with_convention",
    "measure",
    "normalize_outputs",
]
