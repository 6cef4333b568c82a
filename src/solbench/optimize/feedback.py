"""Per-workload feedback on a candidate: bounded in size, identical errors and logs told once.

An agent reads this after every step, so it says what matters (status, which rule failed and by
how much, latency and its spread, S, fraction of T_SOL, what a passing run printed) and never grows
with a long log: each error and log is cut to its head and tail, and a workload whose error or log
repeats an earlier one's points to it.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from solbench.scoring.report import WorkloadScore
from solbench.scoring.sol_score import SPEED_OF_LIGHT_RULE
from solbench.spec.trace import EvaluationStatus, ProfileSummary, Trace

MAX_ERROR_CHARS = 2000
"""Longest error text per workload; longer text keeps its first and last parts."""
MAX_LOG_CHARS = 1000
"""Longest log of a passing workload (what the candidate printed: a debug line, a warning); cut the same way."""
CHEAT = EvaluationStatus.REWARD_HACK.value
PASSED = EvaluationStatus.PASSED.value
IMPLAUSIBLE = EvaluationStatus.IMPLAUSIBLE.value


class WorkloadFeedback(BaseModel):
    """How a candidate did on one public workload."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    workload: str
    """The workload uuid (as on the problem card)."""
    status: str
    """PASSED, INCORRECT_NUMERICAL, COMPILE_ERROR, RUNTIME_ERROR, TIMEOUT, REWARD_HACK, …; IMPLAUSIBLE when the
    workload was measured below the speed-of-light floor (`error` says by how much): a failure."""
    failed_rule: str | None = None
    """The correctness or integrity rule that failed, when one did."""
    error: str | None = None
    """What went wrong: the failure line and the log, cut to MAX_ERROR_CHARS."""
    same_error_as: str | None = None
    """This workload failed with the same error as that earlier workload (`error` is then left out)."""
    log: str | None = None
    """A passing workload's log (what the candidate printed, warnings included), cut to MAX_LOG_CHARS; None when
    empty, or told once: a log the same as an earlier workload's is `same_log_as` instead. A failure's log is in
    `error`."""
    same_log_as: str | None = None
    latency_ms: float | None = None
    """T_k, the median measured latency (PASSED, and IMPLAUSIBLE as the evidence)."""
    spread_ms: float | None = None
    """p90 - p10 of the timed samples: how far to trust a difference in latency."""
    t_sol_ms: float | None = None
    t_b_ms: float | None = None
    t_b_source: str | None = None
    """Where T_b came from: a baselines file's entry, or the reference timed once on this machine and pinned (the
    same text in every environment that compared with it)."""
    score: float | None = None
    """S in [0, 1] (0.5: as fast as T_b, 1: at T_SOL); 0 when not PASSED, None when unscored."""
    fraction_of_sol: float | None = None
    """T_SOL / T_k: 1 is the speed of light."""
    speedup: float | None = None
    """T_b / T_k."""
    input_seed: int | None = None
    """The seed this workload's inputs came from (round r from seed + r): `env.test(solution, seed=...,
    workload=...)` or `solbench replay --seed` regenerates exactly these inputs."""
    profile: ProfileSummary | None = None
    """Where the candidate's time went on this workload (top ops and their share), when the environment profiles
    (`make(..., profile=True)`, `solbench optimize --profile`); None otherwise."""
    implausible: bool = False
    """Status IMPLAUSIBLE, or T_k below the timer's resolution: a measurement problem or a cheat."""
    note: str = ""


def workload_feedback(
    traces: list[Trace], scores: list[WorkloadScore], t_b_sources: Mapping[str, str] | None = None
) -> list[WorkloadFeedback]:
    """One feedback per trace, in order, with repeated errors replaced by a pointer to their first workload;
    `t_b_sources` (workload uuid -> where its T_b came from) is recorded beside T_b."""
    errors, logs = _Told(), _Told()
    result = []
    for trace, score in zip(traces, scores):
        uuid = trace.workload.uuid
        error, same_as = errors.once(_error_text(trace, score), uuid)
        log, same_log_as = logs.once(_passing_log(trace, score), uuid)
        source = (t_b_sources or {}).get(uuid) if score.t_baseline_ms is not None else None
        result.append(_feedback(trace, score, (error, same_as), (log, same_log_as), source))
    return result


class _Told:
    """Texts already given, by the workload that gave each first."""

    def __init__(self) -> None:
        self.first_with: dict[str, str] = {}

    def once(self, text: str | None, uuid: str) -> tuple[str | None, str | None]:
        """(text, None) the first time, (None, the first workload's uuid) after; (None, None) for no text."""
        if not text:
            return None, None
        if text in self.first_with:
            return None, self.first_with[text]
        self.first_with[text] = uuid
        return text, None


def _passing_log(trace: Trace, score: WorkloadScore) -> str | None:
    evaluation = trace.evaluation
    if evaluation is None or score.status != PASSED:
        return None
    return truncate(evaluation.log.strip(), MAX_LOG_CHARS) or None


def _feedback(
    trace: Trace,
    score: WorkloadScore,
    error: tuple[str | None, str | None],
    log: tuple[str | None, str | None],
    t_b_source: str | None,
) -> WorkloadFeedback:
    evaluation = trace.evaluation
    assert evaluation is not None, "feedback is on evaluated traces"
    details = evaluation.solbench
    timing = details.timing if details else None
    latency = evaluation.performance.latency_ms if evaluation.performance else None
    return WorkloadFeedback(
        workload=trace.workload.uuid,
        status=score.status,  # IMPLAUSIBLE where the floor refused a PASSED trace
        failed_rule=_failed_rule(trace, score),
        error=error[0],
        same_error_as=error[1],
        log=log[0],
        same_log_as=log[1],
        latency_ms=latency,
        spread_ms=(timing.p90_ms - timing.p10_ms) if timing and latency is not None else None,
        t_sol_ms=score.t_sol_ms,
        t_b_ms=score.t_baseline_ms,
        t_b_source=t_b_source,
        score=score.score,
        fraction_of_sol=score.t_sol_ms / latency if latency and score.t_sol_ms else None,
        speedup=score.t_baseline_ms / latency if latency and score.t_baseline_ms else None,
        implausible=score.implausible,
        input_seed=details.input_seed if details else None,
        profile=details.profile if details else None,
        note=score.note,
    )


def _failed_rule(trace: Trace, score: WorkloadScore) -> str | None:
    details = trace.evaluation.solbench if trace.evaluation else None
    if score.status == IMPLAUSIBLE:
        return SPEED_OF_LIGHT_RULE
    return details.failed_rule if details else None


def _error_text(trace: Trace, score: WorkloadScore) -> str | None:
    evaluation = trace.evaluation
    assert evaluation is not None, "feedback is on evaluated traces"
    if score.status == IMPLAUSIBLE:
        return truncate(f"IMPLAUSIBLE, not scored: {score.note}")
    if evaluation.status is EvaluationStatus.PASSED:
        return None
    # The trace's log starts with "[solbench] STATUS: failure" when there is a failure line; keep it whole.
    text = evaluation.log.strip() or (evaluation.solbench.failure if evaluation.solbench else "") or ""
    return truncate(text) or evaluation.status.value


def truncate(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """`text` when short enough, else its first third and last two thirds of `limit` around a marker."""
    if len(text) <= limit:
        return text
    head = limit // 3
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-tail:]}"
