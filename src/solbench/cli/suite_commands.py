"""`solbench suite …`: facts about a suite of problems, and importing SOL-ExecBench's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

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


@app.command("import")
def import_suite(
    source: Path = typer.Argument(..., help="SOL-ExecBench's data set: a .parquet file, a folder with data/*.parquet, "
                                            "or problem folders (<subset>/<NNN_name>/definition.json)."),
    output: Path = typer.Option(..., "--output", "-o", help="Folder to write <set>/<NNN_name>/ problem folders into."),
    data_root: list[Path] = typer.Option([], "--data-root", help="Folder to look for safetensors inputs in "
                                                                 "(for the report's missing-data notes)."),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
) -> None:
    """Import SOL-ExecBench's problems as solbench problem folders (FlashInfer-Bench becomes the set FIB), with
    DIR/baselines.json holding the published T_b and T_SOL where the source has them, and DIR/import-report.json.
    Files upstream accepts are read as upstream reads them; what it ignores is reported with file, line and field."""
    from solbench.suite.importer import import_benchmark

    _show_import(import_benchmark(source, output, data_roots=tuple(data_root)), json_output)


@app.command("fetch")
def fetch_suite(
    name: str = typer.Argument(..., help="The benchmark to download: sol-execbench."),
    output: Path = typer.Option(..., "--output", "-o", help="Folder to import the problems into."),
    revision: Optional[str] = typer.Option(None, "--revision", help="The data set's revision (commit, branch or tag)."),
    timeout_s: float = typer.Option(10.0, "--timeout", help="Seconds to wait for the first answer of the server."),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
) -> None:
    """Download SOL-ExecBench's data set from Hugging Face (nvidia/SOL-ExecBench, and the FlashInfer trace files its
    FlashInfer-Bench problems read) and import it as `suite import` does. Without a network it fails at once and
    says how to download elsewhere and import."""
    from solbench.suite.importer.fetch import fetch_benchmark

    _show_import(fetch_benchmark(name, output, revision=revision, timeout_s=timeout_s), json_output)


def _show_import(report, json_output: bool) -> None:
    from solbench.suite.importer import ImportSourceError

    if json_output:
        print(json.dumps(report.as_json()))
    else:
        from rich.console import Console

        from solbench.cli.import_render import import_tables

        Console(soft_wrap=True).print(import_tables(report), markup=False)
    if report.loaded < report.problems:
        raise ImportSourceError(f"{report.problems - report.loaded} of {report.problems} imported problems do not load "
                                f"(load-error notes in {report.output}/import-report.json)")
