"""`solbench eval`: evaluate a solution on every workload of a problem."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import typer

from solbench.cli.common import (
    DEFAULTS,
    PRECISION_HELP,
    CpuFlush,
    Device,
    Precision,
    UsageError,
    ensure_local_probe,
    evaluation_config,
)
from solbench.cli.tier_option import TierChoice, tier_option, tier_value


def evaluate_solution(
    problem_dir: Path = typer.Argument(..., help="Problem folder holding definition.json and workload.jsonl."),
    solution: Path | None = typer.Option(None, "--solution", "-s", help="Solution JSON file."),
    reference: bool = typer.Option(False, "--reference", help="Evaluate the reference itself as the solution."),
    json_output: bool = typer.Option(False, "--json", help="Print only a JSON array of traces on stdout."),
    timeout: float = typer.Option(DEFAULTS.timeout_s, "--timeout", help="Seconds allowed for each sandbox request."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Append traces to this JSONL file."),
    device: Device | None = typer.Option(None, "--device", help="cpu or cuda (default: cuda when present)."),
    rounds: int = typer.Option(DEFAULTS.rounds, "--rounds", help="Correctness rounds, each on fresh inputs."),
    budget: float = typer.Option(
        DEFAULTS.timing.budget_s, "--budget", help="Seconds of timed iterations per workload."
    ),
    timer: str | None = typer.Option(None, "--timer", help="cpu_monotonic, cuda_events or cuda_profiler."),
    memory_limit_gb: float | None = typer.Option(
        None, "--memory-limit-gb", help="Sandbox memory limit (default: half of RAM)."
    ),
    data_root: list[Path] = typer.Option([], "--data-root", help="Folder to search for safetensors inputs."),
    flush: CpuFlush = typer.Option(
        CpuFlush(DEFAULTS.cpu_flush),
        "--flush",
        help="CPU cache flush before each timed call: the operands' cache lines (code "
        "stays warm) or a 64 MiB stream (evicts code too).",
    ),
    hardware: str | None = typer.Option(
        None, "--hardware", "-H", help="Add T_SOL and the SOL score on this hardware to each trace."
    ),
    baselines: Path | None = typer.Option(None, "--baselines", help="Baselines JSON for the SOL score."),
    cache: Path | None = typer.Option(
        None,
        "--cache",
        help="Result cache folder: an evaluation measured before "
        "with the same key is returned from it (see docs/result-cache.md).",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="With --cache: measure again and overwrite the entry."),
    precision: Precision = typer.Option(Precision(DEFAULTS.precision), "--precision", help=PRECISION_HELP),
    tier: TierChoice | None = tier_option(),
) -> None:
    """Evaluate a solution on every workload of a problem; one trace per workload."""
    from rich.console import Console

    from solbench.cli.render import status_counts, traces_table
    from solbench.evaluation.result_cache import CacheWarning
    from solbench.scoring import as_baselines
    from solbench.spec import load_problem, load_solution, reference_solution

    if (solution is None) == (not reference):
        raise UsageError("give exactly one of --solution FILE or --reference")
    config = evaluation_config(
        device,
        rounds=rounds,
        budget_s=budget,
        timeout_s=timeout,
        memory_limit_gb=memory_limit_gb,
        timer=timer,
        data_roots=tuple(data_root),
        cpu_flush=flush.value,
        precision=precision.value,
    )
    chosen_device = config.device
    problem = load_problem(problem_dir, tier_value(tier), device=chosen_device)
    # Exactly one of them was given (checked above): no --solution means --reference.
    candidate = (
        load_solution(solution) if solution is not None else reference_solution(problem.definition, chosen_device)
    )
    errors = Console(stderr=True)
    for warning in problem.warnings:
        errors.print(f"[yellow]warning:[/yellow] {warning}")
    if problem.tier_note:
        errors.print(f"note: {problem.tier_note}", highlight=False, soft_wrap=True)
    if not reference:
        _warn_if_root_sandbox(errors)
    sol_hardware = _sol_hardware(hardware, chosen_device, errors)
    loaded_baselines = as_baselines(baselines)  # a bad file fails before anything runs
    with warnings.catch_warnings(record=True) as cache_warnings:
        warnings.simplefilter("always", CacheWarning)
        traces = _evaluate_with_progress(problem, candidate, config, errors, cache, no_cache)
    for warning in cache_warnings:  # a damaged entry: one line; anything else as Python shows it
        if issubclass(warning.category, CacheWarning):
            errors.print(f"[yellow]warning:[/yellow] {warning.message}", highlight=False, soft_wrap=True)
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    _report_cache(traces, errors)
    if sol_hardware is not None:
        from solbench.scoring import attach_sol

        traces = attach_sol(traces, problem, sol_hardware, loaded_baselines, tuple(data_root), config.precision)
    if output is not None:
        _append_jsonl(output, traces)
    if json_output:
        sys.stdout.write(json.dumps([t.model_dump(mode="json") for t in traces]) + "\n")
        return
    console = Console()
    cached = " · read from the result cache" if _cache_hit(traces) else ""
    console.print(
        traces_table(traces, f"{problem.name} · {candidate.name} · {chosen_device} · {_tier_title(problem)}{cached}")
    )
    console.print(status_counts(traces))


def _tier_title(problem) -> str:
    return f"{problem.tier} tier (its published workloads)" if problem.tier_note else f"{problem.tier} tier"


def _warn_if_root_sandbox(console) -> None:
    """Once per evaluation: the solution's sandbox would keep root (serve and worker refuse to start so)."""
    from solbench.evaluation.confinement import root_sandbox_reason

    reason = root_sandbox_reason()
    if reason is not None:
        console.print(
            f"[yellow]warning:[/yellow] the sandbox runs as root without capabilities: {reason} "
            "(docs/service-workers.md#an-unprivileged-sandbox)",
            highlight=False,
            soft_wrap=True,
        )


def _sol_hardware(hardware: str | None, device: str, console):
    """Look the hardware up before evaluating (a typo fails fast); warn when it is not where the run happens."""
    if hardware is None:
        return None
    from solbench.hardware import lookup

    ensure_local_probe(hardware, console)
    spec = lookup(hardware)
    if (spec.kind == "cpu") != (device == "cpu"):
        console.print(
            f"[yellow]warning:[/yellow] scoring a {device} run against {spec.id} ({spec.kind}): "
            "T_SOL describes other hardware than the one measured"
        )
    return spec


def _cache_record(traces):
    records = [t.evaluation.solbench.cache for t in traces if t.evaluation and t.evaluation.solbench]
    return records[0] if records else None


def _cache_hit(traces) -> bool:
    record = _cache_record(traces)
    return record is not None and record.hit


def _report_cache(traces, console) -> None:
    """One line on stderr saying whether the traces came from the result cache."""
    record = _cache_record(traces)
    if record is None:
        return
    if record.hit:
        console.print(
            f"cache: hit {record.key[:16]} · {len(traces)} trace(s) measured {traces[0].evaluation.timestamp}",
            highlight=False,
            soft_wrap=True,
        )
    elif record.stored:
        console.print(f"cache: miss · measured and stored as {record.key[:16]}", highlight=False, soft_wrap=True)
    else:
        console.print(f"cache: miss · measured, not stored: {record.reason}", highlight=False, soft_wrap=True)


def _evaluate_with_progress(problem, solution, config, console, cache=None, refresh_cache=False):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from solbench.evaluation import evaluate

    if not console.is_terminal:

        def report(done: int, total: int, what: str) -> None:
            console.print(f"[{done}/{total}] {what}", highlight=False)

        return evaluate(problem, solution, config, report, cache=cache, refresh_cache=refresh_cache)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("starting", total=len(problem.workloads))

        def update(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, description=what)

        return evaluate(problem, solution, config, update, cache=cache, refresh_cache=refresh_cache)


def _append_jsonl(path: Path, traces) -> None:
    try:
        with path.open("a", encoding="utf-8") as handle:
            for trace in traces:
                handle.write(trace.model_dump_json() + "\n")
    except OSError as error:
        raise UsageError(f"{path}: cannot write traces: {error.strerror}") from None
