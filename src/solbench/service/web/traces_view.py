"""A stored result's traces as page rows: per-workload times and scores, and the guard findings they record.

Only the public traces are read; held-out traces are never shown (they would reveal the hidden workloads),
only their share of the score, which the result holds.
"""

from __future__ import annotations

from solbench.service.web import views


def workload_rows(result, traces: list[dict]) -> list[views.WorkloadResultRow]:
    """One row per public trace of `result` (`traces`: as this reader may see them), in the order the workloads ran."""
    from solbench.spec import Trace

    rows = []
    for raw in traces:
        trace = Trace.model_validate(raw)
        uuid = trace.workload.uuid
        evaluation = trace.evaluation
        details = evaluation.solbench if evaluation is not None else None
        timing = details.timing if details is not None else None
        samples = sorted(timing.samples_ms) if timing is not None and timing.samples_ms else []
        t_sol, t_b = (result.t_sol_ms or {}).get(uuid), (result.t_b_ms or {}).get(uuid)
        scored = _score(trace, t_sol, t_b, result.hardware) if evaluation is not None and t_sol is not None else None
        status = evaluation.status.value if evaluation is not None else "NOT_EVALUATED"
        failure = details.failure if details is not None else None
        if scored is not None and scored.status == "IMPLAUSIBLE":  # below the speed-of-light floor: the evidence
            status, failure = scored.status, scored.note
        rows.append(
            views.WorkloadResultRow(
                uuid=uuid,
                status=status,
                score=scored.score if scored is not None and t_b is not None else None,
                latency_ms=evaluation.performance.latency_ms
                if evaluation is not None and evaluation.performance
                else None,
                t_sol_ms=t_sol,
                t_baseline_ms=t_b,
                min_ms=samples[0] if samples else None,
                median_ms=timing.median_ms if timing is not None and samples else None,
                max_ms=samples[-1] if samples else None,
                failure=failure,
            )
        )
    return rows


def _score(trace, t_sol_ms: float, t_b_ms: float | None, hardware: str):
    """The WorkloadScore of one trace with the T_SOL and T_b the result was scored with (the library's one
    formula, the speed-of-light floor included)."""
    from solbench.scoring import Baseline, Baselines, score_trace

    baselines = (
        Baselines(
            [
                Baseline(
                    definition=trace.definition,
                    workload=trace.workload.uuid,
                    hardware=hardware,
                    latency_ms=t_b_ms,
                    source="result",
                )
            ]
        )
        if t_b_ms is not None
        else None
    )
    return score_trace(trace, t_sol_ms, baselines, hardware)


def findings_of(traces: list[dict]) -> list[views.FindingRow]:
    """Static findings and failed runtime guards of every public trace, each reported once."""
    from solbench.spec import Trace

    seen: dict[tuple[str, str], views.FindingRow] = {}
    for raw in traces:
        evaluation = Trace.model_validate(raw).evaluation
        details = evaluation.solbench if evaluation is not None else None
        for check in details.checks if details is not None else []:
            if check.phase == "static":
                # the detail is Finding.one_line(): "file:line: rule (severity): message"
                parts = check.detail.split(": ", 2)  # a redacted detail is one phrase: no location
                location, message = (parts[0], parts[2]) if len(parts) == 3 else ("", check.detail)
                severity = "warn" if check.passed else "block"
                row = views.FindingRow(check.rule.removeprefix("static:"), severity, location, message)
            elif not check.passed and check.phase != "correctness":
                row = views.FindingRow(check.rule, "failed", check.phase, check.detail)
            else:
                continue
            seen.setdefault((row.rule, row.location), row)
    return list(seen.values())
