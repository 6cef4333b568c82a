"""Rich rendering of traces; every number shown comes from the trace itself."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from solbench.spec.trace import EvaluationStatus, Trace

_STATUS_STYLE = {EvaluationStatus.PASSED: "green", EvaluationStatus.TIMEOUT: "yellow"}


def format_ms(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 1e-3:
        return f"{value * 1e6:.0f} ns"
    if value < 1:
        return f"{value * 1e3:.1f} µs"
    return f"{value:.3f} ms"


def traces_table(traces: list[Trace], title: str) -> Group:
    """A row per workload, then one line per failure and a note on noisy timings."""
    table = Table(title=title, title_justify="left")
    table.add_column("workload", no_wrap=True)
    table.add_column("axes")
    table.add_column("status", no_wrap=True)
    for column in ("latency", "reference", "speedup", "cv"):
        table.add_column(column, justify="right", no_wrap=True)
    notes: list[Text] = []
    noisy = 0
    for trace in traces:
        evaluation = trace.evaluation
        details = evaluation.solbench
        performance = evaluation.performance
        timing = details.timing if details else None
        style = _STATUS_STYLE.get(evaluation.status, "red")
        table.add_row(
            trace.workload.uuid, " ".join(f"{k}={v}" for k, v in trace.workload.axes.items()),
            f"[{style}]{evaluation.status.value}[/{style}]",
            format_ms(performance.latency_ms) if performance else "-",
            format_ms(performance.reference_latency_ms) if performance and performance.reference_latency_ms else "-",
            f"{performance.speedup_factor:.2f}x" if performance and performance.reference_latency_ms else "-",
            f"{timing.cv:.0%}" if timing else "-",
        )
        if details and details.failure:
            notes.append(Text(f"{trace.workload.uuid}: {details.failure}", style=style))
        noisy += bool(timing and timing.warnings)
    if noisy:
        notes.append(Text(f"{noisy} workload(s) ended timing above the target relative standard error "
                          "(a busy or noisy machine); the trace keeps every sample.", style="dim"))
    return Group(table, *notes)


def status_counts(traces: list[Trace]) -> str:
    counts: dict[str, int] = {}
    for trace in traces:
        counts[trace.evaluation.status.value] = counts.get(trace.evaluation.status.value, 0) + 1
    return ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
