"""Rich rendering of traces; every number shown comes from the trace itself."""

from __future__ import annotations

from rich.table import Table

from solbench.spec.trace import EvaluationStatus, Trace

_STATUS_STYLE = {EvaluationStatus.PASSED: "green", EvaluationStatus.TIMEOUT: "yellow"}


def _format_ms(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 1e-3:
        return f"{value * 1e6:.0f} ns"
    if value < 1:
        return f"{value * 1e3:.1f} µs"
    return f"{value:.3f} ms"


def traces_table(traces: list[Trace], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column, justify in (("workload", "left"), ("axes", "left"), ("status", "left"), ("latency", "right"),
                            ("reference", "right"), ("speedup", "right"), ("cv", "right"), ("detail", "left")):
        table.add_column(column, justify=justify, overflow="fold")
    for trace in traces:
        evaluation = trace.evaluation
        details = evaluation.solbench
        performance = evaluation.performance
        style = _STATUS_STYLE.get(evaluation.status, "red")
        axes = ", ".join(f"{k}={v}" for k, v in trace.workload.axes.items())
        detail = (details.failure or "") if details else ""
        if not detail and details and details.timing and details.timing.warnings:
            detail = details.timing.warnings[0]
        table.add_row(
            trace.workload.uuid[:13], axes, f"[{style}]{evaluation.status.value}[/{style}]",
            _format_ms(performance.latency_ms) if performance else "-",
            _format_ms(performance.reference_latency_ms) if performance and performance.reference_latency_ms else "-",
            f"{performance.speedup_factor:.2f}x" if performance else "-",
            f"{details.timing.cv:.1%}" if details and details.timing else "-",
            detail[:160],
        )
    return table


def status_counts(traces: list[Trace]) -> str:
    counts: dict[str, int] = {}
    for trace in traces:
        counts[trace.evaluation.status.value] = counts.get(trace.evaluation.status.value, 0) + 1
    return ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
