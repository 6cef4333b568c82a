"""`solbench run`: evaluate a solution (the reference by default) on every problem of a suite."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from solbench.cli.common import (
    DEFAULTS,
    PRECISION_HELP,
    Device,
    Precision,
    evaluation_config,
    library_defaults,
    told_with_flags,
)
from solbench.cli.tier_option import TierChoice, tier_option, tier_value
from solbench.runner import suite_run

RUN = library_defaults(suite_run.run_suite)
FLAG_MESSAGES: dict[tuple[str, str | None], str] = {  # the runner's option errors, told with this command's flags
    ("warm_sandboxes", "broker"): "--warm-sandboxes: spares are kept by local worker processes; with --broker the "
    "remote `solbench worker`s run the jobs",
    ("tier", "broker"): "--tier: remote `solbench worker`s receive workload.jsonl only (the GPU tier); drop --broker "
    "to run the CPU tier here",
    ("hardware", "broker"): "--broker: name the hardware whose workers run the jobs with --hardware (`solbench hw "
    "list`)",
}


def run_suite(
    suite: Path = typer.Argument(RUN["suite"], help="Suite folder (default: ./problems) or one problem."),
    category: list[str] = typer.Option(
        list(RUN["categories"]), "--category", "-c", help="Only this set (L1, L2, Quant, FIB …); repeatable."
    ),
    name: list[str] = typer.Option(
        list(RUN["names"]), "--name", help="Only problems whose name contains this; repeatable."
    ),
    solution_name: str = typer.Option(
        RUN["solution_name"],
        "--solution-name",
        help="Solution file each problem ships (solutions/NAME.json, solution_NAME.json)"
        "; `reference` or `reference-compiled` for the problem's own reference.",
    ),
    limit: int | None = typer.Option(RUN["limit"], "--limit", min=1, help="At most N problems."),
    workers: int = typer.Option(RUN["workers"], "--workers", "-j", min=1, help="Problems evaluated in parallel."),
    out: Path | None = typer.Option(
        RUN["out"], "--output", "--out", "-o", help="Run folder (default: runs/<suite>-<solution>)."
    ),
    rerun: bool = typer.Option(RUN["rerun"], "--rerun", help="Evaluate again what an earlier run already finished."),
    hardware: str | None = typer.Option(
        RUN["hardware"], "--hardware", "-H", help="T_SOL on this hardware (default: `local` on CPU when probed)."
    ),
    baselines: Path | None = typer.Option(
        RUN["baselines"], "--baselines", help="Baselines JSON (T_b) for the SOL score."
    ),
    device: Device | None = typer.Option(None, "--device", help="cpu or cuda (default: cuda when present)."),
    rounds: int = typer.Option(DEFAULTS.rounds, "--rounds", min=1, help="Correctness rounds per workload."),
    budget: float = typer.Option(
        DEFAULTS.timing.budget_s, "--budget", min=0, help="Seconds of timed iterations per workload."
    ),
    timeout: float = typer.Option(DEFAULTS.timeout_s, "--timeout", help="Seconds allowed for each sandbox request."),
    broker: str | None = typer.Option(
        RUN["broker"],
        "--broker",
        help="Redis URL of a Celery broker: run the jobs on the `solbench worker`s of "
        "the --hardware instead of local processes.",
    ),
    warm_sandboxes: bool = typer.Option(
        RUN["warm_sandboxes"],
        "--warm-sandboxes",
        help="Keep a spare sandbox started per worker (no solution ever ran in it), "
        "so each problem skips the sandbox's start-up.",
    ),
    precision: Precision = typer.Option(Precision(DEFAULTS.precision), "--precision", help=PRECISION_HELP),
    tier: TierChoice | None = tier_option(),
) -> None:
    """Evaluate many problems, resumably, with progress; write traces and a summary (pass counts per set,
    SOL scores per problem and set)."""
    from rich.console import Console

    from solbench.cli.render import run_tables
    from solbench.cli.run_progress import ProgressLines
    from solbench.runner.errors import RunOptionError

    config = evaluation_config(device, rounds=rounds, budget_s=budget, timeout_s=timeout, precision=precision.value)
    errors = Console(stderr=True, highlight=False)

    def started(event) -> str:
        where = f"workers of {event.hardware} via {broker}" if broker else f"{config.device} · {workers} worker(s)"
        tier_note = f" · tier {tier.value}" if tier else " · tier by device"
        return f"{len(event.jobs)} problem(s) · solution {solution_name} · {where}{tier_note} · traces in {event.out}"

    progress = ProgressLines(errors, started=started, job_line=_job_line, bar=True)
    try:
        run = suite_run.run_suite(
            suite,
            solution_name=solution_name,
            categories=category,
            names=name,
            limit=limit,
            workers=workers,
            out=out,
            rerun=rerun,
            hardware=hardware,
            baselines=baselines,
            config=config,
            broker=broker,
            warm_sandboxes=warm_sandboxes,
            tier=tier_value(tier),
            progress=progress,
        )
    except RunOptionError as error:
        raise told_with_flags(error, FLAG_MESSAGES) from None
    finally:
        progress.close()
    Console().print(run_tables(run.summary, {result.job.name for result in run.results}))
    for result in run.failed:
        errors.print(f"[red]error:[/] {result.job.key}: {result.error}")
    if run.summary.lost_to_dead_workers:
        errors.print(
            f"[red]{run.summary.lost_to_dead_workers} job(s) lost to dead worker processes[/]: run the same "
            f"command again to retry them"
        )
    if run.summary.hardware is None:
        errors.print("no SOL scores: no --hardware given (name the GPU, e.g. --hardware H100_SXM; `solbench hw list`)")
    errors.print(f"summary: {run.summary_path}")
    if run.failed:
        sys.exit(1)


def _job_line(event) -> str:
    result = event.result
    head = f"[{event.done}/{event.total}] {result.job.key}"
    if result.skipped:
        return f"{head} · already done"
    if result.worker_died:
        return f"{head} · [red]lost: its worker process died[/]"
    if result.error:
        return f"{head} · [red]error[/]"
    counts = ", ".join(f"{n} {s}" for s, n in sorted(result.statuses.items()))
    colour = "green" if set(result.statuses) == {"PASSED"} else "red"
    published = " · published workloads (small: no CPU tier needed)" if result.tier_note else ""
    return f"{head} · [{colour}]{counts}[/] · {result.seconds:.1f} s{published}"
