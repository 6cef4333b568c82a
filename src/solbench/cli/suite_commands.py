"""`solbench suite …`: facts about a suite of problems, and importing SOL-ExecBench's."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from solbench.suite.tiers import DEFAULT_MAX_BYTES, DEFAULT_MAX_FLOPS

app = typer.Typer(no_args_is_help=True, help="Facts about a suite of problems.")


@app.command("stats")
def suite_statistics(
    path: Path = typer.Argument(Path("problems"), help="The suite folder (default: ./problems)."),
    json_output: bool = typer.Option(False, "--json", help="Print the counts as JSON."),
    top: int = typer.Option(0, "--top", help="Show only the N largest rows per table (0: all)."),
    flops: bool = typer.Option(
        False,
        "--flops",
        help="Also count FLOPs per tier with the analyzer (seconds per "
        "problem); bytes are always the size-based estimate (inputs + outputs).",
    ),
) -> None:
    """Counts by set, op type, dtype, domain, model, forward/backward, origin and kernel family; distinct
    architectures; sizes per workload tier; and the suite beside SOL-ExecBench's makeup (docs/suite.md)."""
    from rich.console import Console

    from solbench.cli.render import stats_tables, targets_table
    from solbench.suite.stats import suite_stats
    from solbench.suite.targets import target_report

    stats = suite_stats(path, flops=flops)
    targets = target_report(stats)
    if json_output:
        print(json.dumps({**stats.as_json(), "targets": targets}, indent=1))
        return
    console = Console()
    console.print(stats_tables(stats, top or None))
    console.print(_tier_table(stats))
    console.print(targets_table(targets))


@app.command("build")
def build(
    modules: list[str] = typer.Argument(
        None,
        help="Recipe modules to build (e.g. l1 fib); default all, and folders no recipe makes any more are removed.",
    ),
    recipes: Path = typer.Option(Path("suite_recipes"), "--recipes", help="The recipes folder of a checkout."),
    out: Path = typer.Option(Path("problems"), "--out", help="The suite folder the problems are written under."),
) -> None:
    """Regenerate the generated problems from their recipes. Refuses, writing nothing, when a folder it would
    overwrite or remove was edited by hand since, or is hand-written (docs/suite.md)."""
    from solbench.suite.build import build_suite, recipe_drafts

    written = build_suite(out, recipe_drafts(recipes, modules or None))
    print(f"wrote {len(written)} problem folders under {out}")


@app.command("sync-references")
def sync_references(
    path: Path = typer.Argument(Path("problems"), help="A problem folder or a folder of them (default: ./problems)."),
) -> None:
    """Regenerate each definition's `reference` from the reference.py beside it, after editing that file by
    hand. Recipe problems are regenerated from their recipes by `solbench suite build` instead."""
    from solbench.spec.problem import find_problem_folders
    from solbench.suite.reference_file import REFERENCE_FILE, sync_reference

    folders = [f for f in find_problem_folders(path) if (f / REFERENCE_FILE).is_file()]
    changed = [f for f in folders if sync_reference(f)]
    for folder in changed:
        print(f"updated {folder / 'definition.json'}")
    print(f"{len(changed)} of {len(folders)} definitions with a reference.py changed")


@app.command("import")
def import_suite(
    source: Path = typer.Argument(
        ...,
        help="SOL-ExecBench's data set: a .parquet file, a folder with data/*.parquet, "
        "or problem folders (<subset>/<NNN_name>/definition.json).",
    ),
    output: Path = typer.Option(..., "--output", "-o", help="Folder to write <set>/<NNN_name>/ problem folders into."),
    data_root: list[Path] = typer.Option(
        [], "--data-root", help="Folder to look for safetensors inputs in (for the report's missing-data notes)."
    ),
    cpu_tier: bool = typer.Option(
        True,
        "--cpu-tier/--no-cpu-tier",
        help="Derive each problem's CPU tier "
        "(workload.cpu.jsonl: small workloads for this machine; analyses each problem).",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
) -> None:
    """Import SOL-ExecBench's problems as solbench problem folders (FlashInfer-Bench becomes the set FIB), with
    DIR/baselines.json holding the published T_b and T_SOL where the source has them, and DIR/import-report.json.
    Files upstream accepts are read as upstream reads them; what it ignores is reported with file, line and field."""
    from rich.console import Console

    from solbench.suite.importer import import_benchmark

    status = Console(stderr=True)

    def progress(done: int, total: int, label: str) -> None:
        status.print(f"[{done + 1}/{total}] {label}", highlight=False)

    _show_import(
        import_benchmark(
            source, output, data_roots=tuple(data_root), cpu_tier=cpu_tier, progress=None if json_output else progress
        ),
        json_output,
    )


@app.command("fetch")
def fetch_suite(
    name: str = typer.Argument(..., help="The benchmark to download: sol-execbench."),
    output: Path = typer.Option(..., "--output", "-o", help="Folder to import the problems into."),
    revision: str | None = typer.Option(None, "--revision", help="The data set's revision (commit, branch or tag)."),
    timeout_s: float = typer.Option(
        10.0, "--network-timeout", help="Seconds to wait for the first answer of the server."
    ),
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
        raise ImportSourceError(
            f"{report.problems - report.loaded} of {report.problems} imported problems do not load "
            f"(load-error notes in {report.output}/import-report.json)"
        )


def _tier_table(stats):
    from rich.table import Table

    table = Table(
        title="per workload tier (bytes: size-based, inputs + outputs; FLOPs: analyzer, with --flops)",
        title_justify="left",
    )
    columns = (
        "tier",
        "problems (own file)",
        "workloads",
        "per problem",
        "median largest",
        "≥ 400 MB",
        "≤ 40 MB",
        "median largest FLOPs",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "tier" else "right")
    for tier in stats.tiers.values():
        data = tier.as_json()
        flops = data.get("median_largest_workload_flops")
        table.add_row(
            tier.tier,
            f"{data['problems']} ({data['problems_with_own_file']})",
            str(data["workloads"]),
            f"{data['workloads_per_problem']:.1f}",
            f"{data['median_largest_workload_bytes'] / 1e6:.1f} MB",
            str(data["problems_largest_at_least_400MB"]),
            str(data["problems_largest_at_most_40MB"]),
            f"{flops / 1e9:.2f} G" if flops is not None else "-",
        )
    return table


@app.command("cpu-tier")
def cpu_tier(
    path: Path = typer.Argument(..., help="A problem folder, or a folder of problem folders."),
    max_bytes: float = typer.Option(DEFAULT_MAX_BYTES / 1e6, "--max-mb", help="Inputs + outputs per CPU workload, MB."),
    max_gflops: float = typer.Option(
        DEFAULT_MAX_FLOPS / 1e9, "--max-gflops", help="FLOPs per CPU workload (analyzer)."
    ),
    no_analysis: bool = typer.Option(False, "--no-analysis", help="Check the budget by bytes alone (faster)."),
) -> None:
    """Write workload.cpu.jsonl (small workloads for a CPU) beside each problem's workload.jsonl, which stays as
    published; prints what it did for each problem."""
    from rich.console import Console

    from solbench.suite.tiers import write_cpu_tiers

    console = Console(highlight=False)

    def report(result) -> None:
        colour = {"written": "green", "not needed": "cyan"}.get(result.action, "yellow")
        where = f" → {result.path}" if result.path else ""
        console.print(f"[{colour}]{result.action}[/] {result.folder}{where}: {result.reason}", soft_wrap=True)
        if result.workloads:
            sizes = ", ".join(" ".join(f"{k}={v}" for k, v in w.axes.items()) for w in result.workloads)
            console.print(f"    axes: {sizes}", soft_wrap=True)

    results = write_cpu_tiers(
        path, max_bytes=int(max_bytes * 1e6), max_flops=max_gflops * 1e9, analyze=not no_analysis, progress=report
    )
    counts = {action: sum(r.action == action for r in results) for action in ("written", "not needed", "skipped")}
    console.print(f"{len(results)} problem(s): " + ", ".join(f"{n} {a}" for a, n in counts.items()))
