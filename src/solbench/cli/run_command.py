"""`solbench run`: evaluate a solution (the reference by default) on every problem of a suite."""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import typer

from solbench.cli.common import (
    DEFAULTS,
    PRECISION_HELP,
    Device,
    Precision,
    UsageError,
    ensure_local_probe,
    evaluation_config,
)
from solbench.cli.tier_option import TierChoice, tier_option, tier_value


def run_suite(
    suite: Path = typer.Argument(Path("problems"), help="Suite folder (default: ./problems) or one problem."),
    category: list[str] = typer.Option([], "--category", "-c", help="Only this set (L1, L2, Quant, FIB …); repeatable."),
    name: list[str] = typer.Option([], "--name", help="Only problems whose name contains this; repeatable."),
    solution_name: str = typer.Option("reference", "--solution-name",
                                      help="Solution file each problem ships (solutions/NAME.json, solution_NAME.json)"
                                           "; `reference` or `reference-compiled` for the problem's own reference."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="At most N problems."),
    workers: int = typer.Option(1, "--workers", "-j", min=1, help="Problems evaluated in parallel."),
    out: Path | None = typer.Option(None, "--output", "--out", "-o", help="Run folder (default: runs/<suite>-<solution>)."),
    rerun: bool = typer.Option(False, "--rerun", help="Evaluate again what an earlier run already finished."),
    hardware: str | None = typer.Option(None, "--hardware", "-H",
                                           help="T_SOL on this hardware (default: `local` on CPU when probed)."),
    baselines: Path | None = typer.Option(None, "--baselines", help="Baselines JSON (T_b) for the SOL score."),
    device: Device | None = typer.Option(None, "--device", help="cpu or cuda (default: cuda when present)."),
    rounds: int = typer.Option(DEFAULTS.rounds, "--rounds", min=1, help="Correctness rounds per workload."),
    budget: float = typer.Option(DEFAULTS.timing.budget_s, "--budget", min=0,
                                 help="Seconds of timed iterations per workload."),
    timeout: float = typer.Option(DEFAULTS.timeout_s, "--timeout", help="Seconds allowed for each sandbox request."),
    broker: str | None = typer.Option(None, "--broker",
                                         help="Redis URL of a Celery broker: run the jobs on the `solbench worker`s of "
                                              "the --hardware instead of local processes."),
    warm_sandboxes: bool = typer.Option(False, "--warm-sandboxes",
                                        help="Keep a spare sandbox started per worker (no solution ever ran in it), "
                                             "so each problem skips the sandbox's start-up."),
    precision: Precision = typer.Option(Precision(DEFAULTS.precision), "--precision", help=PRECISION_HELP),
    tier: TierChoice | None = tier_option(),
) -> None:
    """Evaluate many problems, resumably, with progress; write traces and a summary (pass counts per set,
    SOL scores per problem and set)."""
    from rich.console import Console

    from solbench.cli.render import run_tables
    from solbench.runner.jobs import plan_jobs
    from solbench.runner.pool import run_jobs
    from solbench.runner.summary import summarize, write_summary
    from solbench.runner.worker import RunSettings
    from solbench.scoring import load_baselines

    config = evaluation_config(device, rounds=rounds, budget_s=budget, timeout_s=timeout, precision=precision.value)
    chosen_device = config.device
    errors = Console(stderr=True, highlight=False)
    # Every input is checked before anything slow happens (probing the CPU, starting workers).
    loaded_baselines = load_baselines(baselines) if baselines else None
    jobs, notes = plan_jobs(suite, solutions=[solution_name], categories=category or None, names=name or None,
                            limit=limit)
    if not jobs:
        raise UsageError(f"{suite}: no problems match (categories {category or 'any'}, names {name or 'any'})")
    sol_hardware, no_scores_reason = _sol_hardware(hardware, chosen_device, errors)
    if broker and warm_sandboxes:
        raise UsageError("--warm-sandboxes: spares are kept by local worker processes; with --broker the remote "
                         "`solbench worker`s run the jobs")
    if broker and tier is not None and tier is not TierChoice.gpu:
        raise UsageError("--tier: remote `solbench worker`s receive workload.jsonl only (the GPU tier); drop --broker "
                         "to run the CPU tier here")
    if broker and sol_hardware is None:
        raise UsageError("--broker: name the hardware whose workers run the jobs with --hardware (`solbench hw list`)")
    for note in notes:
        errors.print(f"[yellow]skipped:[/] {note}")
    out = out or Path("runs") / f"{suite.resolve().name}-{solution_name}"
    settings = RunSettings(
        config=config, out=out, hardware=sol_hardware, baselines=baselines, rerun=rerun,
        warm_sandboxes=warm_sandboxes, tier=tier_value(tier))
    if broker:
        run = _broker_runner(broker, sol_hardware, errors)
        where = f"workers of {sol_hardware} via {broker}"
    else:
        run = partial(run_jobs, workers=workers)
        where = f"{chosen_device} · {workers} worker(s)"
    tier_note = f" · tier {tier.value}" if tier else " · tier by device"
    errors.print(f"{len(jobs)} problem(s) · solution {solution_name} · {where}{tier_note} · traces in {out}")
    results = _run_with_progress(jobs, settings, run, errors)
    failed = [r for r in results if r.error]
    lost = sum(r.worker_died is not None for r in failed)
    summary = replace(summarize(out, sol_hardware, loaded_baselines),
                      errors=[f"{r.job.key}: {r.error}" for r in failed], lost_to_dead_workers=lost)
    path = write_summary(out, summary)
    Console().print(run_tables(summary, {r.job.name for r in results}))
    for result in failed:
        errors.print(f"[red]error:[/] {result.job.key}: {result.error}")
    if lost:
        errors.print(f"[red]{lost} job(s) lost to dead worker processes[/]: run the same command again to retry them")
    if no_scores_reason:
        errors.print(f"no SOL scores: {no_scores_reason}")
    errors.print(f"summary: {path}")
    if failed:
        sys.exit(1)


def _sol_hardware(hardware: str | None, device: str, console) -> tuple[str | None, str]:
    """The hardware T_SOL is derived for, or None and the reason there will be no SOL scores.

    On the CPU the default is the CPU itself (`local`), probed now if this machine has no stored probe.
    """
    from solbench.hardware import LOCAL_ID, lookup

    if hardware is None and device != "cpu":
        return None, "no --hardware given (name the GPU, e.g. --hardware H100_SXM; `solbench hw list`)"
    chosen = hardware or LOCAL_ID
    ensure_local_probe(chosen, console)
    return lookup(chosen).id, ""


def _broker_runner(broker: str, hardware: str, console):
    """`run_jobs_on_broker` for this broker and hardware, after saying which workers will take the jobs."""
    from solbench.runner.celery_app import BrokerSettings
    from solbench.runner.celery_pool import run_jobs_on_broker, workers_serving

    broker_settings = BrokerSettings(broker)
    serving = workers_serving(broker_settings, hardware)
    if serving:
        console.print(f"{len(serving)} worker(s) of {hardware}: {', '.join(serving)}")
    else:
        console.print(f"[yellow]no worker of {hardware} answers yet[/]: the jobs wait in the queue for one "
                      f"(`solbench worker --broker {broker} --hardware {hardware}`)")

    def run(jobs, settings, on_done=None, on_retry=None):
        return run_jobs_on_broker(jobs, settings, broker_settings, hardware=hardware, on_done=on_done,
                                  on_retry=on_retry)
    return run


def _run_with_progress(jobs, settings, run_jobs, console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from solbench.cli.render import worker_retry_line

    done = {"count": 0}

    def line(result) -> str:
        done["count"] += 1
        head = f"[{done['count']}/{len(jobs)}] {result.job.key}"
        if result.skipped:
            return f"{head} · already done"
        if result.worker_died:
            return f"{head} · [red]lost: its worker process died[/]"
        if result.error:
            return f"{head} · [red]error[/]"
        counts = ", ".join(f"{n} {s}" for s, n in sorted(result.statuses.items()))
        colour = "green" if set(result.statuses) == {"PASSED"} else "red"
        return f"{head} · [{colour}]{counts}[/] · {result.seconds:.1f} s"

    if not console.is_terminal:
        return run_jobs(jobs, settings, on_done=lambda r: console.print(line(r)),
                        on_retry=lambda d: console.print(worker_retry_line(d)))
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as bar:
        task = bar.add_task("running", total=len(jobs))

        def finished(result) -> None:
            bar.console.print(line(result))
            bar.update(task, advance=1)
        return run_jobs(jobs, settings, on_done=finished,
                        on_retry=lambda d: bar.console.print(worker_retry_line(d)))
