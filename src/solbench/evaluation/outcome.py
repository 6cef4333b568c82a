"""Assembling Trace records from what happened to a workload."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from solbench.evaluation.correctness import Verdict
from solbench.sandbox import stats
from solbench.sandbox.protocol import Profiled
from solbench.scoring.sol_score import SPEED_OF_LIGHT_RULE
from solbench.spec.trace import (
    Correctness,
    Environment,
    Evaluation,
    EvaluationDetails,
    EvaluationStatus,
    OpShare,
    Performance,
    PrecisionRecord,
    ProfileSummary,
    TimingSummary,
    Trace,
)
from solbench.spec.workload import Workload
from solbench.version import __version__


@dataclass(frozen=True)
class RunContext:
    """What every trace of one run shares."""

    definition: str
    solution: str
    environment: Environment
    device: str
    device_name: str
    clock: dict
    confinement: dict = field(default_factory=dict)


def timing_summary(
    backend: str,
    samples_s: list[float],
    warmup: int,
    flush_bytes: int,
    variants: int,
    warnings: list[str],
    resolution_s: float | None = None,
    flush_mode: str | None = None,
    flush_note: str | None = None,
) -> TimingSummary:
    samples_ms = [s * 1e3 for s in samples_s]
    median_ms = stats.median(samples_ms)
    resolution_ms = resolution_s * 1e3 if resolution_s else None
    return TimingSummary(
        backend=backend,
        samples_ms=samples_ms,
        warmup=warmup,
        median_ms=median_ms,
        resolution_ms=resolution_ms,
        below_resolution=resolution_ms is not None and median_ms < resolution_ms,
        mean_ms=stats.mean(samples_ms),
        p10_ms=stats.quantile(samples_ms, 0.1),
        p90_ms=stats.quantile(samples_ms, 0.9),
        cv=stats.coefficient_of_variation(samples_ms),
        rel_std_err=stats.relative_standard_error(samples_ms),
        cache_flush=flush_bytes > 0,
        flush_bytes=flush_bytes,
        flush_mode=flush_mode,
        flush_note=flush_note,
        input_variants=variants,
        warnings=warnings,
    )


STATUS_RULE = {
    EvaluationStatus.INCORRECT_SHAPE: "shape",
    EvaluationStatus.INCORRECT_DTYPE: "dtype",
    EvaluationStatus.INCORRECT_NUMERICAL: "tolerance",
    EvaluationStatus.COMPILE_ERROR: "build",
    EvaluationStatus.RUNTIME_ERROR: "runtime_error",
    EvaluationStatus.TIMEOUT: "timeout",
    EvaluationStatus.INVALID_REFERENCE: "reference",
    EvaluationStatus.REWARD_HACK: "reward_hack",
    EvaluationStatus.IMPLAUSIBLE: SPEED_OF_LIGHT_RULE,
}
"""The rule a failure names where no more specific one applies: every status but PASSED has one."""


def profile_summary(profiled: Profiled, calls: int) -> ProfileSummary:
    """The sandbox's profile as the trace keeps it: per call, in milliseconds, each op's share of the total."""
    total_s = profiled.total_s
    return ProfileSummary(
        activity=profiled.activity,
        calls=calls,
        total_ms=total_s * 1e3 / calls,
        ops=[
            OpShare(
                name=op.name,
                self_ms=op.self_s * 1e3 / calls,
                share=min(op.self_s / total_s, 1.0) if total_s > 0 else 0.0,
                calls=round(op.calls / calls),
            )
            for op in profiled.ops
        ],
        note=profiled.note,
    )


def correctness_record(verdict: Verdict, rounds: int) -> Correctness:
    return Correctness(
        max_relative_error=verdict.max_relative_error,
        max_absolute_error=verdict.max_absolute_error,
        has_nan=verdict.has_nan,
        has_inf=verdict.has_inf,
        extra={
            "matched_ratio": verdict.min_matched_ratio,
            "relative_error_norm": verdict.max_relative_norm_error,
            "golden": verdict.golden or "not checked",
            "rounds": rounds,
        },
    )


def make_trace(
    context: RunContext,
    workload: Workload,
    status: EvaluationStatus,
    log: str = "",
    *,
    failure: str | None = None,
    verdict: Verdict | None = None,
    rounds: int = 0,
    timing: TimingSummary | None = None,
    reference_timing: TimingSummary | None = None,
    seed: int | None = None,
    timer: str | None = None,
    correctness_only: bool = False,
    precision: PrecisionRecord | None = None,
    rule: str | None = None,
    profile: ProfileSummary | None = None,
) -> Trace:
    """A finished trace. Every failure names its rule (`failed_rule`): the verdict's first failure, else `rule`,
    else the status's own (`STATUS_RULE`), so an agent or a script can branch on it without parsing the log."""
    failed_rule = verdict.failure.rule if verdict and verdict.failure else rule
    if failed_rule is None and status is not EvaluationStatus.PASSED:
        failed_rule = STATUS_RULE[status]
    if failure is None and verdict and verdict.failure:
        failure = (
            f"{verdict.failure.rule} ({verdict.failure.output}, {verdict.failure.phase} "
            f"{verdict.failure.round}): {verdict.failure.detail}"
        )
    details = EvaluationDetails(
        harness_version=__version__,
        device=context.device,
        device_name=context.device_name,
        timer=timer,
        clock=context.clock,
        failed_rule=failed_rule,
        failure=failure,
        checks=verdict.checks if verdict else [],
        timing=timing,
        reference_timing=reference_timing,
        rounds=rounds,
        input_seed=seed,
        confinement=context.confinement,
        correctness_only=correctness_only,
        precision=precision,
        profile=profile,
    )
    correctness = (
        correctness_record(verdict, rounds)
        if verdict and status in (EvaluationStatus.PASSED, EvaluationStatus.INCORRECT_NUMERICAL)
        else None
    )
    performance = None
    if status is EvaluationStatus.PASSED and timing is not None:
        reference_ms = reference_timing.median_ms if reference_timing else 0.0
        performance = Performance(
            latency_ms=timing.median_ms,
            reference_latency_ms=reference_ms,
            speedup_factor=reference_ms / timing.median_ms if timing.median_ms > 0 else 0.0,
        )
    if failure:
        log = f"[solbench] {status.value}: {failure}\n{log}"
    evaluation = Evaluation(
        status=status,
        environment=context.environment,
        timestamp=datetime.now(timezone.utc).isoformat(),
        log=log,
        correctness=correctness,
        performance=performance,
        solbench=details,
    )
    return Trace(definition=context.definition, workload=workload, solution=context.solution, evaluation=evaluation)
