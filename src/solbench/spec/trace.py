"""The Trace schema: one evaluation of one solution on one workload.

The upstream fields come first and keep their names; what solbench records beyond them lives
in `Evaluation.solbench`, an extra key that upstream readers ignore.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from solbench.spec.workload import Workload


class EvaluationStatus(str, Enum):
    PASSED = "PASSED"
    INCORRECT_SHAPE = "INCORRECT_SHAPE"
    INCORRECT_NUMERICAL = "INCORRECT_NUMERICAL"
    INCORRECT_DTYPE = "INCORRECT_DTYPE"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    COMPILE_ERROR = "COMPILE_ERROR"
    TIMEOUT = "TIMEOUT"
    REWARD_HACK = "REWARD_HACK"
    INVALID_REFERENCE = "INVALID_REFERENCE"
    IMPLAUSIBLE = "IMPLAUSIBLE"
    """Correct, but measured below the speed-of-light floor of the hardware it was scored on (T_SOL x (1 -
    margin) less the timer's resolution, scoring/sol_score.py): not scored, counted as a failure. A solbench
    status: the trace keeps its correctness and performance records as the evidence."""


MEASURED_STATUSES = (EvaluationStatus.PASSED, EvaluationStatus.IMPLAUSIBLE)
"""Statuses whose evaluation was timed: their trace carries correctness and performance."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True, ser_json_inf_nan="strings")


class Correctness(_Record):
    max_relative_error: float = 0.0
    max_absolute_error: float = 0.0
    has_nan: bool = False
    has_inf: bool = False
    extra: dict[str, Any] | None = None
    """matched_ratio, rel_l2_error, golden errors, rounds checked."""


class Performance(_Record):
    latency_ms: float = Field(default=0.0, ge=0)
    reference_latency_ms: float = Field(default=0.0, ge=0)
    speedup_factor: float = Field(default=0.0, ge=0)


class Environment(_Record):
    hardware: str = Field(min_length=1)
    libs: dict[str, str] = Field(default_factory=dict)


class CheckOutcome(_Record):
    """One correctness or integrity rule as applied to one output of one round."""

    rule: str
    passed: bool
    detail: str = ""
    value: float | None = None
    limit: float | None = None
    output: str | None = None
    round: int | None = None
    """Correctness round, or timed iteration index when `phase` is ``timing``."""
    phase: str = "correctness"


class TimingSummary(_Record):
    """What a timer measured, in milliseconds, with the raw samples kept for rescoring."""

    backend: str
    samples_ms: list[float]
    warmup: int
    median_ms: float
    mean_ms: float
    p10_ms: float
    p90_ms: float
    cv: float
    """Coefficient of variation (std / mean) of the samples."""
    rel_std_err: float
    """Standard error of the mean relative to the mean; the adaptive loop's stopping target."""
    cache_flush: bool
    flush_bytes: int = 0
    """Bytes evicted between iterations (0: no flush): the stream's size, or the operands' bytes whose cache lines
    were flushed."""
    flush_mode: str | None = None
    """Which flush ran before every timed call: ``operands`` (the cache lines of the call's buffers, CPU),
    ``stream`` (a 64 MiB write, CPU), ``l2`` (CUDA) or ``none``; None in traces written before it was recorded."""
    flush_note: str | None = None
    """Why that flush ran instead of the one asked for (the operand flush's native helper is missing), or None."""
    reused_from: str | None = None
    """For a reference timing taken from an earlier evaluation instead of measured now: that measurement's key
    (evaluation/reference_timing.py); None when measured in this evaluation."""
    input_variants: int = 1
    """How many distinct input sets were rotated through the timed iterations."""
    resolution_ms: float | None = None
    """The timer's resolution, where it states one."""
    below_resolution: bool = False
    """The median is below the timer's resolution: no time can be trusted (a measurement problem or a cheat)."""
    both_orders: bool = False
    """The solution was timed in two halves, one before and one after the reference (evaluation/orders.py)."""
    device_wait_s: float | None = None
    """Seconds this evaluation waited for another one's timing on the device to end (evaluation/device_turn.py)."""
    load_average: float | None = None
    """The machine's 1-minute load average when the timing began: the load it ran under."""
    warnings: list[str] = Field(default_factory=list)


PRECISION_POLICIES = ("auto", "strict", "tolerance")
"""EvaluationConfig.precision and --precision: auto is tolerance for problems imported from SOL-ExecBench, else
strict (see sol/precision.py)."""


class PrecisionRecord(_Record):
    """Which precision policy applied to a workload and the matrix precision it decided (sol/precision.py).

    The same value drives T_SOL's matrix rate for fp32 matrix work and correctness's downgrade rule."""

    policy: Literal["strict", "tolerance"]
    matrix_precision: Literal["fp32", "tf32", "fp16", "bf16"]
    """fp32 means fp32-accurate; lower: the workload's tolerance admits matrix products at that precision."""
    basis: str = ""
    """How it was decided: strict, checked on this workload, inferred from smaller workloads, not determined."""
    admitted_error: list[float] | None = None
    """||out - ref|| / ||ref|| per output of the reference run at `matrix_precision` (tolerance policy)."""


class SolRecord(_Record):
    """Speed of light and SOL score of this workload on `hardware` (solbench eval --hardware)."""

    hardware: str
    t_sol_ms: float
    bound: str
    coverage_full: bool
    score: float | None = None
    baseline_ms: float | None = None
    baseline_source: str | None = None
    implausible: bool = False
    """The measured latency is below `floor_ms`: faster than the hardware allows (the trace's status is then
    IMPLAUSIBLE and `score` 0)."""
    floor_ms: float | None = None
    """The speed-of-light floor: T_SOL x (1 - margin) less the timer's resolution (scoring/sol_score.py)."""
    precision: PrecisionRecord | None = None
    """The precision policy T_SOL's matrix rate followed."""


class CacheRecord(_Record):
    """How a result cache was used for this trace (``evaluate(..., cache=DIR)`` or ``solbench eval --cache DIR``)."""

    key: str = Field(pattern=r"^[0-9a-f]{64}$")
    """sha256 over the solution, the problem, the harness version, the device and the evaluation config."""
    hit: bool
    """True: this trace was read from the cache, measured by an earlier evaluation; False: measured now."""
    stored: bool
    """The evaluation is in the cache under `key` (always true on a hit)."""
    reason: str | None = None
    """Why a measured evaluation was not stored, when it was not."""


class OpShare(_Record):
    """One op of a profile: its own time (children excluded) and its share of the profiled time."""

    name: str
    self_ms: float
    """Per profiled call."""
    share: float
    """Of the profiled time, in [0, 1]."""
    calls: int
    """How often the op ran per profiled call."""


class ProfileSummary(_Record):
    """Where a solution's time went on one workload: its calls run again under torch.profiler, untimed, after
    the timed loop (EvaluationConfig.profile). Reported by the sandbox, so for the agent's eyes only: never scored."""

    activity: Literal["cpu", "cuda"]
    """Whose time is summed: the ops' CPU time, or on a GPU their device (kernel) time."""
    calls: int
    """Calls profiled."""
    total_ms: float
    """The ops' summed own time per call (profiler overhead included, so above the measured latency)."""
    ops: list[OpShare]
    """The ops that took the most time, most first."""
    note: str | None = None
    """Why there is no profile (the profiler could not run here), when there is none."""


class EvaluationDetails(_Record):
    """solbench's own record, beside the upstream fields."""

    harness_version: str
    device: str
    device_name: str
    timer: str | None = None
    clock: dict[str, Any] = Field(default_factory=dict)
    failed_rule: str | None = None
    failure: str | None = None
    """One line saying which rule failed and by how much."""
    checks: list[CheckOutcome] = Field(default_factory=list)
    correctness_only: bool = False
    """A correctness-only evaluation (EvaluationConfig.time_solution false, an optimisation loop's `test`): nothing
    was timed, so a PASSED trace has no performance record."""
    timing: TimingSummary | None = None
    reference_timing: TimingSummary | None = None
    rounds: int = 0
    input_seed: int | None = None
    """Revealed after the run so a failure can be reproduced; a new run draws a new one."""
    confinement: dict[str, Any] = Field(default_factory=dict)
    sol: SolRecord | None = None
    precision: PrecisionRecord | None = None
    """The precision policy the downgrade rule followed, and the matrix precision it admitted."""
    profile: ProfileSummary | None = None
    """Where the solution's time went (only when the evaluation asked for a profile)."""
    cache: CacheRecord | None = None
    """Set when the evaluation used a result cache."""
    tier: str | None = None
    """The workload tier the workload came from: ``gpu`` (workload.jsonl) or ``cpu`` (workload.cpu.jsonl)."""
    const_overrides: dict[str, int] | None = None
    """Const axes this CPU-tier workload sized down (axis -> size used), where the definition's would not fit a
    CPU: the problem evaluated is the definition at these sizes (docs/tiers.md)."""


class Evaluation(_Record):
    status: EvaluationStatus
    environment: Environment
    timestamp: str = Field(min_length=1)
    log: str = ""
    correctness: Correctness | None = None
    performance: Performance | None = None
    solbench: EvaluationDetails | None = None

    @model_validator(mode="after")
    def _sections_match_status(self) -> Evaluation:
        wants_correctness = self.status in (*MEASURED_STATUSES, EvaluationStatus.INCORRECT_NUMERICAL)
        wants_performance = self.status in MEASURED_STATUSES and not (
            self.solbench is not None and self.solbench.correctness_only
        )
        if (self.correctness is not None) != wants_correctness:
            raise ValueError(
                f"correctness must {'' if wants_correctness else 'not '}be present for {self.status.value}"
            )
        if (self.performance is not None) != wants_performance:
            raise ValueError(
                f"performance must {'' if wants_performance else 'not '}be present for {self.status.value}"
            )
        return self


class Trace(_Record):
    definition: str = Field(min_length=1)
    workload: Workload
    solution: str | None = None
    evaluation: Evaluation | None = None
