"""`solbench mcp`: serve the optimisation environment to an MCP client over stdio."""

from __future__ import annotations

from pathlib import Path

import typer

from solbench.cli.common import DEFAULTS, Device, ensure_local_probe, evaluation_config, hardware_for_device


def serve_mcp(
    problems: Path = typer.Option(Path("problems"), "--problems", help="Folder of problems (or one problem) to offer."),
    server: str | None = typer.Option(
        None,
        "--server",
        help="A leaderboard service's URL: serve its environments (its problems, workers and cache) instead of "
        "local ones; the budget flags then hold per problem.",
    ),
    token: str | None = typer.Option(None, "--token", help="API token for --server (default $SOLBENCH_TOKEN)."),
    hardware: str | None = typer.Option(
        None,
        "--hardware",
        "-H",
        help="Hardware id T_SOL is computed for (default: this CPU's probe, `local`, on the CPU; required on a GPU).",
    ),
    budget_evals: int | None = typer.Option(None, "--budget-evals", help="Evaluations allowed (all problems)."),
    budget_tests: int | None = typer.Option(None, "--budget-tests", help="Tests allowed (all problems)."),
    budget_seconds: float | None = typer.Option(
        None, "--budget-seconds", help="Seconds of measuring allowed (all problems)."
    ),
    cache: Path | None = typer.Option(None, "--cache", help="Result cache folder: a repeated candidate is free."),
    baselines: Path | None = typer.Option(
        None, "--baselines", help="Baselines JSON for T_b (else the reference is timed once per problem)."
    ),
    reward: str = typer.Option("sol", "--reward", help="sol, speedup, log_speedup or gated_sol."),
    device: Device | None = typer.Option(None, "--device", help="cpu or cuda (default: cuda when present)."),
    rounds: int = typer.Option(DEFAULTS.rounds, "--rounds", help="Correctness rounds, each on fresh inputs."),
    timing_budget: float = typer.Option(
        DEFAULTS.timing.budget_s, "--timing-budget", help="Seconds of timing per workload."
    ),
) -> None:
    """Serve the optimisation environment as MCP tools over stdio (list_problems, get_problem_card, test,
    evaluate, history, best), one budget and one result cache for every problem.

    stdout carries the MCP protocol only; everything else goes to stderr. See docs/agent-env.md.
    """
    if server is not None:
        _serve_remote(server, token, hardware, budget_evals, budget_tests, budget_seconds, reward)
        return
    from rich.console import Console

    from solbench.optimize import Budget, check_reward
    from solbench.optimize.mcp_server import ProblemsSession, ServerSettings, serve_stdio
    from solbench.scoring import as_baselines
    from solbench.spec.problem import find_problem_folders

    find_problem_folders(problems)  # no problems there: exit 2 before serving
    config = evaluation_config(device, rounds=rounds, budget_s=timing_budget)
    hardware = hardware_for_device(hardware, config.device)
    settings = ServerSettings(
        problems=problems,
        hardware=hardware,
        reward=check_reward(reward),
        cache=cache,
        budget=Budget(evals=budget_evals, tests=budget_tests, seconds=budget_seconds),
        config=config,
        baselines=as_baselines(baselines),
    )
    ensure_local_probe(hardware, Console(stderr=True))
    from solbench.hardware import lookup

    lookup(hardware)  # an unknown id: exit 2 now, not on the first tool call
    serve_stdio(ProblemsSession(settings))


def _serve_remote(
    server: str,
    token: str | None,
    hardware: str | None,
    evals: int | None,
    tests: int | None,
    seconds: float | None,
    reward: str,
) -> None:
    """The same tools over the service's envs: one per problem, made on first use (docs/agent-env.md)."""
    from solbench.optimize import Budget, check_reward
    from solbench.optimize.mcp_server import serve_stdio
    from solbench.service.env_client import connect
    from solbench.service.env_mcp import RemoteProblemsSession

    envs = connect(server, token)
    envs.request("GET", "/problems")  # an unreachable server or a bad token: exit 2 now, not on the first tool call
    budget = Budget(evals=evals, tests=tests, seconds=seconds)
    serve_stdio(RemoteProblemsSession(envs, budget=budget, reward=check_reward(reward), hardware=hardware))
