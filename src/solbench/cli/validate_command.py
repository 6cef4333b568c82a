"""`solbench validate`: check a problem or a whole suite before anyone is scored on it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from solbench.cli.tier_option import TierChoice


def validate_problems(
    path: Path = typer.Argument(..., help="A problem folder, or a folder of problem folders (a suite)."),
    hardware: str = typer.Option("H200", "--hardware", "-H", help="Hardware for the T_SOL check."),
    workers: int = typer.Option(1, "--workers", "-j", min=1, help="Problems validated in parallel."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object per problem (JSON lines)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Report only problems with findings."),
    tier: TierChoice = typer.Option(
        TierChoice.all,
        "--tier",
        help="Workloads checked: all (both tiers, the default: uuids unique across them), gpu (workload.jsonl) or cpu.",
    ),
) -> None:
    """Load every definition, run each reference on the CPU at its smallest workload, derive T_SOL for
    every workload, and catch degenerate problems. Exit 1 when any problem has an error."""
    from dataclasses import asdict

    from rich.console import Console

    from solbench.hardware import lookup
    from solbench.suite.validate import validate_path

    spec = lookup(hardware)
    errors = Console(stderr=True, highlight=False)

    def progress(report, done: int, total: int) -> None:
        if json_output or (quiet and not report.findings):
            return
        mark = "[green]ok[/]" if report.ok else "[red]FAIL[/]"
        timing = f" · reference {report.reference_ms:.1f} ms" if report.reference_ms is not None else ""
        errors.print(f"[{done}/{total}] {mark} {report.name or report.path}{timing} · {report.seconds:.1f} s")
        for finding in report.findings:
            colour = "red" if finding.severity == "error" else "yellow"
            errors.print(f"    [{colour}]{finding.severity}[/] {finding.check}: {finding.message}", soft_wrap=True)

    reports = validate_path(path, spec, workers=workers, progress=progress, tier=tier.value)
    failed = [r for r in reports if not r.ok]
    if json_output:
        for report in reports:
            print(json.dumps({**asdict(report), "ok": report.ok}))
    else:
        for report in reports:  # checks across problems ran after each problem's progress line
            for finding in (f for f in report.findings if f.check == "suite"):
                colour = "red" if finding.severity == "error" else "yellow"
                errors.print(
                    f"{report.name or report.path}: [{colour}]{finding.severity}[/] suite: {finding.message}",
                    soft_wrap=True,
                )
        errors.print(
            f"{len(reports) - len(failed)} of {len(reports)} problems valid"
            + (f"; failing: {', '.join(r.name or r.path for r in failed)}" if failed else "")
        )
    if failed:
        sys.exit(1)
