"""`solbench suite …`: facts about a suite of problems."""

from __future__ import annotations

import json
from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True, help="Facts about a suite of problems.")


@app.command("stats")
def suite_statistics(
    path: Path = typer.Argument(Path("problems"), help="The suite folder (default: ./problems)."),
    json_output: bool = typer.Option(False, "--json", help="Print the counts as JSON."),
    top: int = typer.Option(0, "--top", help="Show only the N largest rows per table (0: all)."),
) -> None:
    """Counts by set, op type, dtype, domain, model, forward/backward and origin."""
    from rich.console import Console

    from solbench.cli.render import stats_tables
    from solbench.suite.stats import suite_stats

    stats = suite_stats(path)
    if json_output:
        print(json.dumps(stats.as_json(), indent=1))
        return
    Console().print(stats_tables(stats, top or None))
