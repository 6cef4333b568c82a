"""`solbench optimize`: rounds of an agent proposing candidates for one problem, scored by the env."""

from __future__ import annotations

import dataclasses
import json
import signal
import sys
from pathlib import Path

import typer

from solbench.cli.common import DEFAULTS, Device, ensure_local_probe, evaluation_config, hardware_for_device
from solbench.optimize.run_settings import DEFAULT_AGENT_TIMEOUT_S, DEFAULT_CANDIDATES, DEFAULT_ROUNDS


def optimize_problem(
    problem: Path = typer.Argument(..., help="Problem folder holding definition.json and workload.jsonl."),
    agent: str = typer.Option(
        ...,
        "--agent",
        help="Shell command run in each round folder (e.g. 'claude -p \"...\"'), "
        "or builtin:reference / builtin:compile.",
    ),
    rounds: int = typer.Option(DEFAULT_ROUNDS, "--rounds", min=1, help="Rounds of the agent."),
    candidates: int = typer.Option(
        DEFAULT_CANDIDATES, "--candidates", "-k", min=1, help="Candidates evaluated per round, at most."
    ),
    budget_evals: int | None = typer.Option(
        None, "--budget-evals", min=0, help="Evaluations the whole run may spend (default: unlimited)."
    ),
    budget_tests: int | None = typer.Option(
        None, "--budget-tests", min=0, help="`solbench test` calls the run may spend (default: unlimited)."
    ),
    agent_timeout: float = typer.Option(
        DEFAULT_AGENT_TIMEOUT_S,
        "--agent-timeout",
        min=0.1,
        help="Seconds an agent may run per round; then its process group is killed.",
    ),
    workspace: Path | None = typer.Option(
        None, "--workspace", "-w", help="Run folder (default: runs/optimize-<problem>)."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --workspace where it stopped."),
    hardware: str | None = typer.Option(
        None, "--hardware", "-H", help="Hardware whose T_SOL the reward uses (default: `local` on CPU)."
    ),
    held_out: float | None = typer.Option(
        None,
        "--held-out",
        min=0,
        max=0.99,
        help="Share of workloads kept from the agent until the end (default: a quarter, none below four workloads).",
    ),
    baselines: Path | None = typer.Option(None, "--baselines", help="Baselines JSON (T_b) for the SOL score."),
    memory: Path | None = typer.Option(None, "--memory", help="Strategy memory file (default: DIR/memory.jsonl)."),
    cache: Path | None = typer.Option(None, "--cache", help="Result cache folder (default: DIR/cache)."),
    device: Device | None = typer.Option(None, "--device", help="cpu or cuda (default: cuda when present)."),
    correctness_rounds: int = typer.Option(
        DEFAULTS.rounds, "--correctness-rounds", min=1, help="Correctness rounds per candidate and workload."
    ),
    timing_budget: float = typer.Option(
        DEFAULTS.timing.budget_s, "--timing-budget", min=0, help="Seconds of timed iterations per workload."
    ),
    timeout: float = typer.Option(DEFAULTS.timeout_s, "--timeout", help="Seconds allowed for each sandbox request."),
    json_output: bool = typer.Option(False, "--json", help="Print only the result as JSON on stdout."),
    profile: bool = typer.Option(
        False, "--profile", help="Give each workload's feedback a profile: the top ops and their share of the time."
    ),
) -> None:
    """Run an agent for rounds against one problem; each candidate is evaluated and journaled, and the best is
    re-measured on every workload, held-out ones included, at the end (DIR/best/).

    Each round the agent (a shell command) runs in a fresh round folder: problem/ (public workloads only),
    history/, feedback.json, memory.jsonl; it writes solution.json or solutions/NAME.json, and may run
    `solbench test solution.json` there. Environment: SOLBENCH_ROUND, SOLBENCH_WORKSPACE, SOLBENCH_BUDGET_LEFT,
    SOLBENCH_DEVICE."""
    from rich.console import Console

    from solbench.optimize.loop import run_optimize
    from solbench.optimize.run_settings import OptimizeSettings

    config = evaluation_config(
        device, rounds=correctness_rounds, budget_s=timing_budget, timeout_s=timeout, profile=profile
    )
    hardware = hardware_for_device(hardware, config.device)
    errors = Console(stderr=True, highlight=False, soft_wrap=True)  # one line per round, however long
    ensure_local_probe(hardware, errors)
    settings = OptimizeSettings(
        problem=problem,
        agent=agent,
        workspace=workspace or Path("runs") / f"optimize-{problem.resolve().name}",
        rounds=rounds,
        candidates=candidates,
        budget_evals=budget_evals,
        budget_tests=budget_tests,
        agent_timeout_s=agent_timeout,
        resume=resume,
        hardware=hardware,
        config=config,
        cache=cache,
        memory=memory,
        held_out=held_out,
        baselines=baselines,
    )
    errors.print(
        f"optimizing {problem} with {agent} · up to {rounds} round(s) × {candidates} candidate(s) · "
        f"workspace {settings.workspace}"
    )
    signal.signal(signal.SIGTERM, _interrupted)  # `kill` ends the agent's process group too, as Ctrl-C does
    result = run_optimize(
        settings,
        on_round=lambda report: errors.print(round_line(report, rounds)),
        on_note=lambda note: errors.print(f"[yellow]{note}[/]"),
    )
    if json_output:
        sys.stdout.write(json.dumps(result_json(result), default=str) + "\n")
        return
    for line in summary_lines(result):
        print(line)


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt


def round_line(report, rounds: int) -> str:
    """One progress line per round: what the agent did, each candidate, the best so far, the budget."""
    if report.agent is None:
        agent = "agent finished before the interruption"
    elif report.agent.timed_out:
        agent = f"agent killed after {report.agent.seconds:.1f} s (timeout)"
    else:
        agent = f"agent exited {report.agent.exit_code} in {report.agent.seconds:.1f} s"
    parts = []
    for candidate in report.candidates:
        if candidate.error:
            parts.append(f"{candidate.candidate_id} not evaluated ({candidate.error[:80]})")
            continue
        statuses = " ".join(f"{status}×{count}" for status, count in sorted(candidate.statuses.items()))
        flags = (" CHEAT" if candidate.flagged_cheat else "") + (" cached" if candidate.cache_hit else "")
        parts.append(f"{candidate.candidate_id} reward {candidate.reward:.3f} {statuses}{flags}")
    if report.resumed:
        parts.append(f"{report.resumed} from the journal")
    candidates = "; ".join(parts) if parts else "no candidates"
    best = f"best {report.best} ({report.best_reward:.3f})" if report.best else "no correct candidate yet"
    evals = report.budget_left.get("evals")
    budget = "" if evals is None else f" · {evals} eval(s) left"
    edits = f" · problem/ edited: {', '.join(report.problem_edits)}" if report.problem_edits else ""
    return f"round {report.round}/{rounds} · {agent} · {candidates} · {best}{budget}{edits}"


def summary_lines(result) -> list[str]:
    lines = [f"stopped: {result.stopped_because}"]
    if result.best is None:
        lines.append("no correct candidate: nothing to re-measure")
        return lines
    final = result.final or {}
    held = final.get("held_out_reward")
    lines.append(f"best: candidate {result.best} ({result.best_solution})")
    lines.append(
        f"final re-measurement: reward {final.get('reward', 0):.3f} ({final.get('reward_kind')}) · "
        f"public {final.get('public_reward', 0):.3f}"
        + (f" · held-out {held:.3f}" if held is not None else "")
        + f" · correct {final.get('correct')}"
    )
    for feedback in final.get("feedback", []):
        latency = feedback.get("latency_ms")
        score = feedback.get("score")
        lines.append(
            f"  {feedback['workload']}: {feedback['status']}"
            + (f" · {latency:.4f} ms" if latency is not None else "")
            + (f" · S {score:.3f}" if score is not None else "")
            + (" (held out)" if feedback["workload"] in final.get("held_out", []) else "")
        )
    lines.append(
        f"written: {result.workspace / 'best'}/solution.json, result.json; journal {result.workspace / 'journal.jsonl'}"
    )
    return lines


def result_json(result) -> dict:
    """The OptimizeResult as JSON; the final traces are left out (they are in DIR/best/result.json)."""
    value = dataclasses.asdict(result)
    if value.get("final"):
        value["final"] = {k: v for k, v in value["final"].items() if k != "traces"}
    return value
