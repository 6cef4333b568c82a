"""`solbench score`: SOL scores per workload, problem and set from a traces file."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from solbench.cli.common import DEFAULTS, PRECISION_HELP, Precision, ensure_local_probe


def score_traces(
    traces_file: Path = typer.Argument(..., help="JSONL traces (solbench eval -o FILE)."),
    hardware: str = typer.Option(..., "--hardware", "-H", help="Hardware the traces were measured on."),
    baselines: Path | None = typer.Option(None, "--baselines", help="Baselines JSON (T_b per workload)."),
    problems: list[Path] = typer.Option([], "--problems", help="Folder of problem folders, for traces without T_SOL."),
    weights: Path | None = typer.Option(
        None,
        "--weights",
        help="A solbench reach report: weight each problem's "
        "S by its share of the model's addressable time (problem_weights).",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
    precision: Precision = typer.Option(
        Precision(DEFAULTS.precision), "--precision", help=PRECISION_HELP + " Used for traces without T_SOL."
    ),
) -> None:
    """Score traces: T_SOL from the trace (eval --hardware) or by analysing the problem; T_b from --baselines
    or the reference timed in the same run. PASSED workloads without T_SOL or T_b are left out of the means."""
    from rich.console import Console

    from solbench.scoring import score_trace_file

    if traces_file.exists():
        ensure_local_probe(hardware, Console(stderr=True))
    runtime = None
    if weights is not None:
        from solbench.scoring.weights import load_weights

        runtime = load_weights(weights)  # before scoring: a bad file fails fast
    report = score_trace_file(
        traces_file, hardware, baselines=baselines, problem_roots=problems, precision=precision.value
    )
    weighted = None
    if runtime is not None:
        from solbench.scoring.weights import weighted_score

        weighted = weighted_score(report, runtime.problem_weights, runtime.model)
    if json_output:
        data = report.as_json()
        if weighted is not None:
            data["runtime_weighted"] = weighted.model_dump(mode="json")
        print(json.dumps(data))
        return
    from solbench.cli.render import score_tables

    console = Console()
    console.print(score_tables(report))
    if weighted is not None:
        console.print(_weighted_table(weighted))


def _weighted_table(weighted):
    from rich.table import Table

    from solbench.cli.render import format_score

    table = Table(
        title=f"runtime-weighted by {weighted.model}'s addressable time: S {format_score(weighted.weighted)}"
        f" (unweighted {format_score(weighted.unweighted)}; scored problems stand for "
        f"{100 * weighted.weight_scored:.1f}%, unscored {100 * weighted.weight_missing:.1f}%)",
        title_justify="left",
    )
    for column in ("problem", "weight", "S"):
        table.add_column(column)
    for row in weighted.problems:
        table.add_row(row.definition, f"{100 * row.weight:.2f}%", format_score(row.score))
    return table
