"""`solbench score`: SOL scores per workload, problem and set from a traces file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from solbench.cli.common import DEFAULTS, PRECISION_HELP, Precision, ensure_local_probe


def score_traces(
    traces_file: Path = typer.Argument(..., help="JSONL traces (solbench eval -o FILE)."),
    hardware: str = typer.Option(..., "--hardware", "-H", help="Hardware the traces were measured on."),
    baselines: Optional[Path] = typer.Option(None, "--baselines", help="Baselines JSON (T_b per workload)."),
    problems: list[Path] = typer.Option([], "--problems", help="Folder of problem folders, for traces without T_SOL."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
    precision: Precision = typer.Option(Precision(DEFAULTS.precision), "--precision",
                                        help=PRECISION_HELP + " Used for traces without T_SOL."),
) -> None:
    """Score traces: T_SOL from the trace (eval --hardware) or by analysing the problem; T_b from --baselines
    or the reference timed in the same run. PASSED workloads without T_SOL or T_b are left out of the means."""
    from rich.console import Console

    from solbench.score import score_trace_file

    if traces_file.exists():
        ensure_local_probe(hardware, Console(stderr=True))
    report = score_trace_file(traces_file, hardware, baselines=baselines, problem_roots=problems,
                              precision=precision.value)
    if json_output:
        print(json.dumps(report.as_json()))
        return
    from solbench.cli.render import score_tables

    Console().print(score_tables(report))
