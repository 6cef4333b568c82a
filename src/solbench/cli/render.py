"""Rich rendering of traces; every number shown comes from the trace itself."""

from __future__ import annotations

import statistics

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
        assert evaluation is not None, "the table shows evaluated traces"
        details = evaluation.solbench
        performance = evaluation.performance
        timing = details.timing if details else None
        style = _STATUS_STYLE.get(evaluation.status, "red")
        table.add_row(
            trace.workload.uuid,
            " ".join(f"{k}={v}" for k, v in trace.workload.axes.items()),
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
        notes.append(
            Text(
                f"{noisy} workload(s) ended timing above the target relative standard error "
                "(a busy or noisy machine); the trace keeps every sample.",
                style="dim",
            )
        )
    return Group(table, *notes)


def status_counts(traces: list[Trace]) -> str:
    counts: dict[str, int] = {}
    for trace in traces:
        assert trace.evaluation is not None, "counts are of evaluated traces"
        status = trace.evaluation.status.value
        counts[status] = counts.get(status, 0) + 1
    return ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))


def sol_table(results, title: str) -> Table:
    """One row per workload; where the folder carries published figures, they stand beside T_SOL with the ratio."""
    published = any(r.published is not None for r in results)
    table = Table(title=title, title_justify="left")
    columns = ["workload", "axes", "GFLOP", "MB", "FLOP/B", "T_SOL", "bound", "mm", "coverage"]
    if published:
        columns[6:6] = ["published", "ratio"]
    for column in columns:
        table.add_column(column, no_wrap=column in ("workload", "T_SOL"))
    for result in results:
        coverage = "full" if result.coverage.full else "missing: " + ", ".join(u.op for u in result.coverage.uncovered)
        if result.coverage.execution.startswith("real"):
            coverage += " (ran on real inputs)"
        elif result.coverage.execution.startswith("hybrid"):
            coverage += " (real index values)"
        row = [
            result.workload.uuid,
            " ".join(f"{k}={v}" for k, v in result.workload.axes.items()),
            f"{result.flops / 1e9:.3f}",
            f"{result.bytes / 1e6:.3f}",
            f"{result.arithmetic_intensity:.1f}",
            format_ms(result.t_sol_ms),
            result.bound,
            precision_cell(result.precision),
            coverage,
        ]
        if published:
            figure = result.published
            row[6:6] = (
                ["-", "-"]
                if figure is None
                else [format_ms(figure.sol_ms), "-" if figure.ratio is None else f"{figure.ratio:.3g}"]
            )
        table.add_row(*row)
    return table


def precision_cell(record) -> str:
    """The matrix precision fp32 matrix work was charged at (`precision_lines` names the policy); `*` where it was
    inferred from smaller workloads or not determined."""
    if record is None:
        return "-"
    marker = "" if record.policy == "strict" or record.basis.startswith("tolerance: checked") else "*"
    return f"{record.matrix_precision}{marker}"


def precision_lines(results) -> list[str]:
    """One line per distinct way the precision was decided, for below the T_SOL table."""
    seen: dict[str, int] = {}
    for result in results:
        if result.precision is not None:
            basis = result.precision.basis.split(" (relative error")[0]
            seen[basis] = seen.get(basis, 0) + 1
    return [f"precision: {basis} ({count} workload{'s' if count > 1 else ''})" for basis, count in seen.items()]


def disagreement_lines(results) -> list[str]:
    """For --explain: why T_SOL and the published figure differ, per workload outside [0.5, 2]."""
    return [
        f"{r.workload.uuid}: ratio {r.published.ratio:.3g}: {r.published.disagreement}"
        if r.published.ratio
        else f"{r.workload.uuid}: {r.published.disagreement}"
        for r in results
        if r.published is not None and r.published.disagreement
    ]


def set_progress_line(index: int, count: int, analysis) -> str:
    """One problem of a set, as it finishes (a sol.problem_set.ProblemSol)."""
    head = f"[{index}/{count}] {analysis.folder}  {analysis.seconds:.2f} s"
    if analysis.error is not None:
        return f"{head}  error: {analysis.error}"
    results = analysis.workloads
    coverage = "full" if all(r.coverage.full for r in results) else "partial coverage"
    line = f"{head}  {len(results)} workloads{' (published: no CPU tier needed)' if analysis.tier_note else ''}"
    line += f"  {coverage}"
    ratios = analysis.ratios
    if ratios:
        line += (
            f"  T_SOL/published median {statistics.median(ratios):.3g} ({analysis.agreeing}/{len(ratios)} in [0.5, 2])"
        )
    return line


def set_summary_lines(summary, where: str) -> list[str]:
    """A set's totals (a sol.problem_set.SetSolSummary): what analysed, how long, the ratios to the published
    figures."""
    lines = [
        f"{summary.analysed} of {summary.problems} problems analysed {where} ({summary.workloads} workloads"
        + (f", {summary.partial_coverage} with partial coverage" if summary.partial_coverage else "")
        + "); "
        f"{summary.seconds_total:.1f} s in all, median {summary.seconds_median:.2f} s per problem, 90th "
        f"percentile {summary.seconds_p90:.2f} s"
    ]
    if summary.slowest:
        lines.append("over a second: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in summary.slowest))
    if summary.ratio_median is not None:
        lines.append(
            f"T_SOL / published over {summary.published_workloads} workloads: median "
            f"{summary.ratio_median:.3g}, {summary.within_agreement:.0%} within [0.5, 2]"
            + (
                "; outside it: " + ", ".join(f"{name} {count}" for name, count in summary.disagreements.items())
                if summary.disagreements
                else ""
            )
        )
    lines += [f"failed: {failure}" for failure in summary.failed]
    return lines


def explain_table(result) -> Table:
    table = Table(
        title=f"{result.workload.uuid}: ops (unfused bytes {result.unfused_bytes / 1e6:.3f} MB, "
        f"compulsory {result.bytes / 1e6:.3f} MB)",
        title_justify="left",
    )
    for column in ("op", "operands", "matrix FLOP", "vector FLOP", "special", "bytes", "formula"):
        table.add_column(column, overflow="fold")
    for row in result.ops or []:
        style = "" if row.covered else "red"
        table.add_row(
            f"[{style}]{row.op}[/{style}]" if style else row.op,
            row.shapes,
            f"{row.matrix_flops:.4g}",
            f"{row.vector_flops:.4g}",
            f"{row.special_ops:.4g}",
            f"{row.bytes:,}",
            row.formula,
        )
    return table


def format_score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def score_tables(report) -> Group:
    """Per workload, per problem and per set, from a score.ScoreReport; the policy for unscored workloads last."""
    workloads = Table(title=f"SOL scores on {report.hardware}", title_justify="left")
    reference = any(w.reference_t_sol_ms is not None for w in report.workloads)
    columns = ["problem", "workload", "status", "T_k", "T_b", "T_SOL", "S", "note"]
    if reference:  # a baselines file with published figures (suite import): the reference T_SOL and the ratio
        columns[6:6] = ["T_SOL ref", "ratio"]
    for column in columns:
        workloads.add_column(column, overflow="fold")
    for w in report.workloads:
        row = [
            w.definition,
            w.workload,
            w.status,
            format_ms(w.t_kernel_ms),
            format_ms(w.t_baseline_ms),
            format_ms(w.t_sol_ms),
            format_score(w.score),
            ("IMPLAUSIBLE " if w.implausible and w.status != "IMPLAUSIBLE" else "") + w.note,
        ]
        if reference:
            row[6:6] = [format_ms(w.reference_t_sol_ms), "-" if w.t_sol_ratio is None else f"{w.t_sol_ratio:.3g}"]
        workloads.add_row(*row)
    problems = Table(title="per problem (S: mean, failures count 0; T_k: geometric mean)", title_justify="left")
    for column in ("set", "problem", "solution", "passed", "unscored", "T_k", "S"):
        problems.add_column(column)
    for p in report.problems:
        problems.add_row(
            p.set,
            p.definition,
            p.solution or "-",
            f"{p.passed}/{p.workloads}",
            str(p.unscored),
            format_ms(p.latency_ms),
            format_score(p.score),
        )
    sets = Table(title="per set (mean over problems)", title_justify="left")
    for column in ("set", "problems passed", "workloads passed", "S"):
        sets.add_column(column)
    for item in report.sets:
        sets.add_row(
            item.set,
            f"{item.problems_passed}/{item.problems}",
            f"{item.workloads_passed}/{item.workloads}",
            format_score(item.score),
        )
    policy = Text(
        f"unscored policy: {report.unscored_policy} (a PASSED workload without T_SOL or T_b has no S "
        "and is left out of the means)",
        style="dim",
    )
    return Group(workloads, problems, sets, policy)


def stats_tables(stats, top: int | None = None) -> Group:
    """The suite's spread, one table per dimension, then set × domain."""
    summary = Text(
        f"{stats.problems} problems · {stats.workloads} workloads · {stats.models} models "
        f"({len(stats.architectures)} architectures) · {stats.backward_share:.0%} backward"
    )
    tables: list = [summary]
    for dimension, counter in [*stats.counts.items(), ("family", stats.families)]:
        table = Table(title=f"by {dimension}", title_justify="left")
        table.add_column(dimension)
        table.add_column("problems", justify="right")
        table.add_column("share", justify="right")
        for value, count in counter.most_common(top):
            table.add_row(value, str(count), f"{count / stats.problems:.0%}")
        tables.append(table)
    domains = sorted({d for c in stats.set_by_domain.values() for d in c})
    cross = Table(title="set × domain", title_justify="left")
    cross.add_column("set")
    for domain in domains:
        cross.add_column(domain, justify="right")
    for set_name, counter in sorted(stats.set_by_domain.items()):
        cross.add_row(set_name, *(str(counter.get(d, 0) or "") for d in domains))
    tables.append(cross)
    return Group(*tables)


def targets_table(targets: list[dict]) -> Table:
    """suite.targets: each count beside the least a suite at SOL-ExecBench's scale has."""
    table = Table(title="beside SOL-ExecBench (suite.targets)", title_justify="left")
    for column in ("target", "wanted", "suite", "met"):
        table.add_column(column, justify="left" if column == "target" else "right")
    for row in targets:
        shown = (lambda v: f"{v / 1e6:,.0f} MB") if row.get("unit") == "bytes" else (lambda v: f"{v:,.0f}")
        table.add_row(
            row["target"],
            shown(row["wanted"]),
            shown(row["value"]),
            "yes" if row["met"] else "no",
            style=None if row["met"] else "red",
        )
    return table


def run_tables(summary, just_run: set[str] | None = None) -> Group:
    """Per set, then per problem: pass counts and SOL scores of a suite run."""
    sets = Table(title=f"per set (SOL scores on {summary.hardware or 'no hardware'})", title_justify="left")
    for column in ("set", "problems passed", "workloads passed", "S"):
        sets.add_column(column, justify="right" if column != "set" else "left")
    for item in summary.sets:
        sets.add_row(
            item.set,
            f"{item.problems_passed}/{item.problems}",
            f"{item.workloads_passed}/{item.workloads}",
            format_score(item.score),
        )
    problems = Table(title="per problem", title_justify="left")
    for column in ("set", "problem", "solution", "passed", "S"):
        problems.add_column(column, overflow="fold")
    for item in summary.problems:
        result = item.result
        style = None if result.passed == result.workloads else "red"
        problems.add_row(
            item.set,
            item.problem,
            item.solution,
            f"{result.passed}/{result.workloads}",
            format_score(result.score),
            style=style,
        )
    unscored = sum(item.result.unscored for item in summary.problems) if summary.hardware else 0
    if not unscored:
        return Group(problems, sets)
    return Group(
        problems,
        sets,
        Text(
            f"{unscored} PASSED workload(s) without T_SOL or T_b are left out of the scores "
            f"(unscored policy: {summary.unscored_policy})",
            style="dim",
        ),
    )


def worker_retry_line(death) -> str:
    """One line for a job sent back to the queue because its worker process died (runner.progress.JobRetried)."""
    return f"{death.job.key} · [yellow]its worker process {death.how}; queued to try once more[/]"
