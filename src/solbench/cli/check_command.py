"""`solbench check`: the static rules alone, on a solution file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer


def check_solution_file(
    solution: Path = typer.Argument(..., help="Solution JSON file."),
    json_output: bool = typer.Option(False, "--json", help="Print only a JSON array of findings."),
) -> None:
    """Run the static rules over a solution's sources. Exit 1 when a finding blocks the solution."""
    from solbench.guard import blocking, check_solution
    from solbench.spec import load_solution

    findings = check_solution(load_solution(solution))
    if json_output:
        print(json.dumps([f.model_dump(mode="json") for f in findings]))
    else:
        from rich.console import Console

        console = Console()
        for finding in findings:
            style = "red" if finding.severity.value == "block" else "yellow"
            console.print(f"[{style}]{finding.one_line()}[/{style}]\n    {finding.explanation}", highlight=False)
        blocked = len(blocking(findings))
        console.print(f"{len(findings)} finding(s), {blocked} blocking" if findings else "no findings")
    if blocking(findings):
        sys.exit(1)
