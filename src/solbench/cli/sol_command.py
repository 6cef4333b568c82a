"""`solbench sol`: T_SOL of every workload of a problem on a given hardware."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from solbench.cli.common import DEFAULTS, PRECISION_HELP, Precision, UsageError
from solbench.cli.tier_option import TierChoice, tier_option, tier_value
from solbench.spec.problem import DEFINITION_FILE

SLOW_ANALYSIS_S = 2.0
"""An analysis slower than this says why on stderr: never silently slow."""


def slow_analysis_line(results, seconds: float) -> str:
    calls = max((r.coverage.aten_calls or 0 for r in results), default=0)
    return (
        f"note: the analysis took {seconds:.1f} s for {len(results)} workload(s); the reference makes up to "
        f"{calls:,} ATen calls per workload, each recorded through fake tensors (references that loop in Python "
        "over experts, tokens or steps are the slow ones; the precision policy's first check adds its own runs, "
        "then is cached)"
    )


def speed_of_light(
    problem_dir: Path = typer.Argument(
        ...,
        help="Problem folder holding definition.json and workload.jsonl, or a "
        "folder of problem folders (a set: each analysed in turn, in one "
        "process).",
    ),
    hardware: str = typer.Option(..., "--hardware", "-H", help="Hardware id (see `solbench hw list`) or `local`."),
    json_output: bool = typer.Option(
        False, "--json", help="Print only a JSON array, one object per workload (for a set: one JSON line per problem)."
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="For a set: also write one JSON line per problem to this file, as each finishes."
    ),
    explain: bool = typer.Option(False, "--explain", help="Per-op table with the formula behind each number."),
    data_root: list[Path] = typer.Option([], "--data-root", help="Folder to search for safetensors inputs."),
    baselines: Path | None = typer.Option(
        None,
        "--baselines",
        help="Baselines file whose entries give sol_ms (suite import writes one): the "
        "published T_SOL beside solbench's, with the ratio.",
    ),
    precision: Precision = typer.Option(Precision(DEFAULTS.precision), "--precision", help=PRECISION_HELP),
    tier: TierChoice | None = tier_option(
        "Workloads analysed: gpu (workload.jsonl), cpu (workload.cpu.jsonl) or "
        "all; default: the CPU tier for CPU hardware when the problem has one."
    ),
) -> None:
    """Derive T_SOL for every workload: FLOPs by class, compulsory bytes, the binding roof, coverage."""
    from functools import partial

    from rich.console import Console

    from solbench.cli.common import ensure_local_probe
    from solbench.hardware import lookup
    from solbench.sol import analyze_problem
    from solbench.spec import load_problem
    from solbench.spec.inputs import inputs_for_analysis

    ensure_local_probe(hardware, Console(stderr=True))
    spec = lookup(hardware)
    from solbench.scoring.baselines import as_baselines

    figures = as_baselines(baselines)  # read before the analysis: a bad file fails fast
    if not (problem_dir / DEFINITION_FILE).is_file():
        if explain:
            raise UsageError("--explain takes one problem folder; a set's per-op tables would run to millions of rows")
        _speed_of_light_of_set(
            problem_dir,
            spec,
            json_output=json_output,
            output=output,
            data_root=data_root,
            figures=figures,
            precision=precision.value,
            tier=tier_value(tier),
        )
        return
    if output is not None:
        raise UsageError("--output is for a set of problems; for one problem, redirect --json")
    problem = load_problem(problem_dir, tier_value(tier), device="cpu" if spec.kind == "cpu" else "cuda")
    if problem.tier_note:
        Console(stderr=True).print(f"note: {problem.tier_note}", markup=False, soft_wrap=True)
    started = time.perf_counter()
    results = analyze_problem(
        problem,
        spec,
        explain=explain,
        make_inputs=partial(inputs_for_analysis, data_roots=tuple(data_root)),
        precision=precision.value,
    )
    seconds = time.perf_counter() - started
    if figures is not None:
        from solbench.sol.analysis import with_published

        results = with_published(problem, results, spec, figures)
    if seconds > SLOW_ANALYSIS_S:
        Console(stderr=True).print(slow_analysis_line(results, seconds), markup=False, soft_wrap=True)
    if json_output:
        print(json.dumps([r.model_dump(mode="json", exclude_none=True) for r in results]))
        return
    from rich.console import Console

    from solbench.cli.render import disagreement_lines, explain_table, precision_lines, sol_table

    console = Console()
    console.print(sol_table(results, f"{problem.name} on {spec.id}"))
    for line in precision_lines(results):
        console.print(line, markup=False, soft_wrap=True)
    if explain:
        for result in results:
            console.print(explain_table(result))
        lines = disagreement_lines(results)
        if lines:
            console.print("T_SOL beside the published figure, ratios outside [0.5, 2]:", markup=False)
            for line in lines:
                console.print("  " + line, markup=False, soft_wrap=True)


def _speed_of_light_of_set(
    root: Path,
    spec,
    *,
    json_output: bool,
    output: Path | None,
    data_root: list[Path],
    figures,
    precision: str,
    tier: str | None,
) -> None:
    """Every problem below `root`, a line each as it finishes, then the summary; exit status 1 when any failed."""
    import sys

    from rich.console import Console

    from solbench.cli.render import set_progress_line, set_summary_lines
    from solbench.sol.problem_set import analyze_set, summarize
    from solbench.spec.problem import find_problem_folders

    folders = find_problem_folders(root)
    console = Console()
    try:
        sink = output.open("w") if output is not None else None
    except OSError as error:
        raise UsageError(f"{output}: cannot write the results there: {error.strerror}") from None
    analyses = []
    try:
        for analysis in analyze_set(
            folders, root, spec, precision=precision, tier=tier, data_roots=tuple(data_root), baselines=figures
        ):
            analyses.append(analysis)
            line = analysis.model_dump_json(exclude_none=True)
            if sink is not None:
                sink.write(line + "\n")
                sink.flush()
            if json_output:
                print(line, flush=True)
            else:
                console.print(set_progress_line(len(analyses), len(folders), analysis), markup=False, soft_wrap=True)
    finally:
        if sink is not None:
            sink.close()
    summary = summarize(analyses)
    if not json_output:
        for line in set_summary_lines(summary, f"on {spec.id}"):
            console.print(line, markup=False, soft_wrap=True)
    if summary.failed:
        sys.exit(1)
