"""`solbench baseline`: measure T_b on this hardware for every workload of a suite."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import typer

from solbench.cli.common import DEFAULTS, Device, UsageError, ensure_local_probe, evaluation_config
from solbench.optimize.run_settings import DEFAULT_AGENT_TIMEOUT_S, DEFAULT_CANDIDATES


def measure_baselines(
    suite: Path = typer.Argument(Path("problems"), help="Suite folder (default: ./problems) or one problem."),
    output: Path = typer.Option(..., "--output", "-o", help="Baselines JSON to write (merged into if it exists)."),
    hardware: str | None = typer.Option(None, "--hardware", "-H",
                                           help="Hardware id the baselines are for (default: `local` on CPU)."),
    category: list[str] = typer.Option([], "--category", "-c", help="Only this set; repeatable."),
    name: list[str] = typer.Option([], "--name", help="Only problems whose name contains this; repeatable."),
    solution_name: list[str] = typer.Option([], "--solution-name",
                                            help="Also time this optimized baseline solution each problem ships."),
    compile_reference: bool = typer.Option(True, "--compile/--no-compile",
                                           help="Also time the reference under torch.compile."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="At most N problems."),
    workers: int = typer.Option(1, "--workers", "-j", min=1, help="Problems measured in parallel."),
    work: Path | None = typer.Option(None, "--work", help="Folder for the candidates' traces (resumable)."),
    rerun: bool = typer.Option(False, "--rerun", help="Measure again what an earlier run already finished."),
    device: Device | None = typer.Option(None, "--device", help="cpu or cuda (default: cuda when present)."),
    rounds: int = typer.Option(DEFAULTS.rounds, "--rounds", min=1,
                               help="Correctness rounds per candidate and workload; with --agent, the agent's rounds."),
    budget: float = typer.Option(DEFAULTS.timing.budget_s, "--budget", min=0,
                                 help="Seconds of timed iterations per workload."),
    agent: str | None = typer.Option(None, "--agent",
                                        help="Also search with this agent (`solbench optimize --agent`) per problem."),
    search_candidates: int = typer.Option(DEFAULT_CANDIDATES, "--candidates", "-k", min=1,
                                   help="With --agent: candidates evaluated per round."),
    budget_evals: int | None = typer.Option(None, "--budget-evals", min=0,
                                               help="With --agent: evaluations per problem (default: unlimited)."),
    agent_timeout: float = typer.Option(DEFAULT_AGENT_TIMEOUT_S, "--agent-timeout", min=0.1,
                                        help="With --agent: seconds per round before its process group is killed."),
    correctness_rounds: int | None = typer.Option(None, "--correctness-rounds", min=1,
                                                     help="Correctness rounds when --rounds counts the agent's "
                                                          f"(default {DEFAULTS.rounds})."),
) -> None:
    """T_b per workload: the fastest correct of the reference (eager), the reference under torch.compile,
    any named baseline solutions and, with --agent, the best candidate of an optimisation loop per problem,
    stored as versioned data for `run`, `eval` and `score`.

    With --agent, --rounds counts the agent's rounds (as in `solbench optimize`); correctness rounds are then
    --correctness-rounds."""
    from rich.console import Console

    from solbench.cli.render import worker_retry_line
    from solbench.hardware import lookup
    from solbench.runner.baseline import fastest_correct, merge
    from solbench.runner.jobs import COMPILED_REFERENCE, REFERENCE, plan_jobs
    from solbench.runner.pool import run_jobs
    from solbench.runner.worker import RunSettings
    from solbench.scoring.baselines import load_baselines, save_baselines
    from solbench.version import __version__

    checked = rounds if agent is None else (correctness_rounds or DEFAULTS.rounds)
    config = evaluation_config(device, rounds=checked, budget_s=budget, time_reference=False)
    chosen_device = config.device
    if hardware is None and chosen_device != "cpu":
        raise UsageError("--hardware is required on a GPU: name the spec these baselines are for (e.g. H200)")
    existing = load_baselines(output).entries() if output.exists() else []
    candidates = [REFERENCE] + ([COMPILED_REFERENCE] if compile_reference else []) + list(solution_name)
    jobs, notes = plan_jobs(suite, solutions=candidates, categories=category or None, names=name or None, limit=limit)
    if not jobs:
        raise UsageError(f"{suite}: no problems match")
    errors = Console(stderr=True, highlight=False)
    ensure_local_probe(hardware or "local", errors)
    spec = lookup(hardware or "local")
    for note in notes:
        errors.print(f"[yellow]skipped:[/] {note}")
    work = work or Path("runs") / f"baseline-{spec.id.lower()}"
    settings = RunSettings(config=config, out=work, rerun=rerun)
    errors.print(f"timing {len(candidates)} candidate(s) on {len(jobs) // len(candidates) or len(jobs)} problem(s) "
                 f"on {spec.id} · traces in {work}")
    counter = {"done": 0}

    def report(result) -> None:
        counter["done"] += 1
        state = "already done" if result.skipped else (f"error: {result.error}" if result.error else
                                                       ", ".join(f"{n} {s}" for s, n in result.statuses.items()))
        errors.print(f"[{counter['done']}/{len(jobs)}] {result.job.key} · {state} · {result.seconds:.1f} s")

    run_jobs(jobs, settings, workers=workers, on_done=report,
             on_retry=lambda death: errors.print(worker_retry_line(death)))
    measured, missing = fastest_correct(work, spec.id, candidates)
    if agent is not None:
        measured, missing = _search(jobs, agent, rounds, search_candidates, budget_evals, agent_timeout, spec.id,
                                    config, work, measured, missing, errors)
    for note in missing:
        errors.print(f"[yellow]warning:[/] {note}")
    entries = merge(existing, measured)
    save_baselines(output, entries, created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   harness_version=__version__, hardware_description=spec.name)
    sources: dict[str, int] = {}
    for entry in measured:
        sources[entry.source] = sources.get(entry.source, 0) + 1
    errors.print(f"{len(measured)} workload baselines measured ("
                 + ", ".join(f"{n} from {s}" for s, n in sorted(sources.items())) + f"); {output} holds {len(entries)}")


def _search(jobs, agent, rounds, candidates, budget_evals, agent_timeout, hardware_id, config, work, measured, missing,
            errors):
    """The agent's loop on every problem; its best candidates' latencies join the references' (fastest wins)."""
    from solbench.cli.optimize_command import round_line
    from solbench.optimize.baseline_search import SearchProblem, SearchSettings, search_baselines
    from solbench.runner.baseline import fastest
    from solbench.runner.jobs import REFERENCE

    problems = [SearchProblem(job.problem_dir, job.set, job.name) for job in jobs if job.solution == REFERENCE]
    settings = SearchSettings(agent=agent, rounds=rounds, candidates=candidates, budget_evals=budget_evals,
                              agent_timeout_s=agent_timeout, hardware=hardware_id, config=config, work=work)
    errors.print(f"searching with {agent}: {rounds} round(s) per problem on {len(problems)} problem(s)")
    found, notes = search_baselines(
        problems, settings, on_problem=lambda problem, text: errors.print(f"{problem.set}/{problem.name} · {text}"),
        on_round=lambda report: errors.print(round_line(report, rounds)))
    searched = {(b.definition, b.workload) for b in found}
    still_missing = [note for note in missing if not any(f"{d} workload {w}:" in note for d, w in searched)]
    return fastest(measured, found), still_missing + notes
