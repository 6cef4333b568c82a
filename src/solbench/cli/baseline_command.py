"""`solbench baseline`: measure T_b on this hardware for every workload of a suite."""

from __future__ import annotations

from pathlib import Path

import typer

from solbench.cli.common import DEFAULTS, Device, UsageError, evaluation_config, library_defaults, told_with_flags
from solbench.optimize.baseline_search import AgentSearch
from solbench.runner import baseline_measurement

BASELINE = library_defaults(baseline_measurement.measure_baselines)
SEARCH = library_defaults(AgentSearch)
FLAG_MESSAGES: dict[tuple[str, str | None], str] = {  # the runner's option errors, told with this command's flags
    ("hardware", None): "--hardware is required on a GPU: name the spec these baselines are for (e.g. H200)"
}


def measure_baselines(
    suite: Path = typer.Argument(BASELINE["suite"], help="Suite folder (default: ./problems) or one problem."),
    output: Path = typer.Option(..., "--output", "-o", help="Baselines JSON to write (merged into if it exists)."),
    hardware: str | None = typer.Option(
        BASELINE["hardware"], "--hardware", "-H", help="Hardware id the baselines are for (default: `local` on CPU)."
    ),
    category: list[str] = typer.Option(
        list(BASELINE["categories"]), "--category", "-c", help="Only this set; repeatable."
    ),
    name: list[str] = typer.Option(
        list(BASELINE["names"]), "--name", help="Only problems whose name contains this; repeatable."
    ),
    solution_name: list[str] = typer.Option(
        list(BASELINE["solution_names"]),
        "--solution-name",
        help="Also time this optimized baseline solution each problem ships.",
    ),
    compile_reference: bool = typer.Option(
        BASELINE["compile_reference"], "--compile/--no-compile", help="Also time the reference under torch.compile."
    ),
    limit: int | None = typer.Option(BASELINE["limit"], "--limit", min=1, help="At most N problems."),
    workers: int = typer.Option(BASELINE["workers"], "--workers", "-j", min=1, help="Problems measured in parallel."),
    work: Path | None = typer.Option(BASELINE["work"], "--work", help="Folder for the candidates' traces (resumable)."),
    rerun: bool = typer.Option(
        BASELINE["rerun"], "--rerun", help="Measure again what an earlier run already finished."
    ),
    device: Device | None = typer.Option(None, "--device", help="cpu or cuda (default: cuda when present)."),
    rounds: int = typer.Option(
        DEFAULTS.rounds,
        "--rounds",
        min=1,
        help="Correctness rounds per candidate and workload; with --agent, the agent's rounds.",
    ),
    budget: float = typer.Option(
        DEFAULTS.timing.budget_s, "--budget", min=0, help="Seconds of timed iterations per workload."
    ),
    agent: str | None = typer.Option(
        None, "--agent", help="Also search with this agent (`solbench optimize --agent`) per problem."
    ),
    search_candidates: int = typer.Option(
        SEARCH["candidates"], "--candidates", "-k", min=1, help="With --agent: candidates evaluated per round."
    ),
    budget_evals: int | None = typer.Option(
        SEARCH["budget_evals"],
        "--budget-evals",
        min=0,
        help="With --agent: evaluations per problem (default: unlimited).",
    ),
    agent_timeout: float = typer.Option(
        SEARCH["agent_timeout_s"],
        "--agent-timeout",
        min=0.1,
        help="With --agent: seconds per round before its process group is killed.",
    ),
    correctness_rounds: int | None = typer.Option(
        None,
        "--correctness-rounds",
        min=1,
        help=f"Correctness rounds when --rounds counts the agent's (default {DEFAULTS.rounds}).",
    ),
) -> None:
    """T_b per workload: the fastest correct of the reference (eager), the reference under torch.compile,
    any named baseline solutions and, with --agent, the best candidate of an optimisation loop per problem,
    stored as versioned data for `run`, `eval` and `score`.

    With --agent, --rounds counts the agent's rounds (as in `solbench optimize`); correctness rounds are then
    --correctness-rounds."""
    from rich.console import Console

    from solbench.cli.run_progress import ProgressLines
    from solbench.runner.errors import NoProblemsMatch, RunOptionError

    checked = rounds if agent is None else (correctness_rounds or DEFAULTS.rounds)
    config = evaluation_config(device, rounds=checked, budget_s=budget, time_reference=False)
    search = (
        None
        if agent is None
        else AgentSearch(
            agent, rounds=rounds, candidates=search_candidates, budget_evals=budget_evals, agent_timeout_s=agent_timeout
        )
    )
    errors = Console(stderr=True, highlight=False)
    progress = ProgressLines(errors, started=_started, job_line=_job_line)
    try:
        measurement = baseline_measurement.measure_baselines(
            suite,
            output=output,
            hardware=hardware,
            categories=category,
            names=name,
            solution_names=solution_name,
            compile_reference=compile_reference,
            limit=limit,
            workers=workers,
            work=work,
            rerun=rerun,
            config=config,
            search=search,
            progress=progress,
        )
    except RunOptionError as error:
        raise told_with_flags(error, FLAG_MESSAGES) from None
    except NoProblemsMatch as error:
        raise UsageError(f"{error.suite}: no problems match") from None
    finally:
        progress.close()
    for note in measurement.missing:
        errors.print(f"[yellow]warning:[/] {note}")
    sources: dict[str, int] = {}
    for entry in measurement.measured:
        sources[entry.source] = sources.get(entry.source, 0) + 1
    errors.print(
        f"{len(measurement.measured)} workload baselines measured ("
        + ", ".join(f"{n} from {s}" for s, n in sorted(sources.items()))
        + f"); {measurement.output} holds {len(measurement.baselines)}"
    )


def _started(event) -> str:
    candidates, jobs = len(event.solutions), len(event.jobs)
    return (
        f"timing {candidates} candidate(s) on {jobs // candidates or jobs} problem(s) on {event.hardware} "
        f"· traces in {event.out}"
    )


def _job_line(event) -> str:
    result = event.result
    state = (
        "already done"
        if result.skipped
        else (f"error: {result.error}" if result.error else ", ".join(f"{n} {s}" for s, n in result.statuses.items()))
    )
    return f"[{event.done}/{event.total}] {result.job.key} · {state} · {result.seconds:.1f} s"
