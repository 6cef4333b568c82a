"""`solbench openenv-serve`: serve a problem's optimisation environment as an OpenEnv environment over HTTP."""

from __future__ import annotations

from pathlib import Path

import typer

from solbench.cli.common import DEFAULTS, Device, UsageError, ensure_local_probe, hardware_for_device


def serve_openenv(
    problem: str = typer.Argument(..., help="A problem folder, or with --server the name of one of its problems."),
    server: str | None = typer.Option(
        None, "--server", help="A leaderboard service's URL: its workers evaluate each episode's env, with its cache."
    ),
    token: str | None = typer.Option(None, "--token", help="API token for --server (default $SOLBENCH_TOKEN)."),
    hardware: str | None = typer.Option(
        None, "--hardware", "-H", help="Hardware id T_SOL is computed for (default: local on the CPU, the server's)."
    ),
    reward: str = typer.Option("sol", "--reward", help="sol, speedup, log_speedup or gated_sol."),
    budget_evals: int | None = typer.Option(None, "--budget-evals", help="Evaluations each episode allows."),
    cache: Path | None = typer.Option(None, "--cache", help="Local: a result cache shared by every episode."),
    baselines: Path | None = typer.Option(None, "--baselines", help="Local: baselines JSON for T_b."),
    device: Device | None = typer.Option(None, "--device", help="Local: cpu or cuda (default: cuda when present)."),
    rounds: int = typer.Option(DEFAULTS.rounds, "--rounds", help="Local: correctness rounds."),
    timing_budget: float = typer.Option(DEFAULTS.timing.budget_s, "--timing-budget", help="Local: timing seconds."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8001, "--port", help="Port to listen on."),
    max_sessions: int = typer.Option(1, "--max-sessions", help="Episodes served at once, each its own env."),
) -> None:
    """Serve PROBLEM as an OpenEnv environment (reset, step, state; /ws sessions), each episode a fresh environment
    with its own budget, evaluated here or by --server's workers. Needs `pip install 'solbench[rl]'`; see
    docs/agent-env.md."""
    try:
        from solbench.service.openenv_env import serve_openenv as serve
    except ImportError as error:
        raise UsageError(f"openenv-serve needs the rl extra (pip install 'solbench[rl]'): {error}") from None
    from pydantic import ValidationError
    from rich.console import Console

    from solbench.service.episode_envs import EnvSettings

    try:
        settings = EnvSettings(
            server=server,
            token=token,
            hardware=hardware,
            reward=reward,
            budget_evals=budget_evals,
            cache=cache,
            baselines=baselines,
            device=device.value if device else DEFAULTS.device,
            rounds=rounds,
            timing_budget_s=timing_budget,
        )
    except ValidationError as error:
        raise UsageError("; ".join(e["msg"].removeprefix("Value error, ") for e in error.errors())) from None
    if server is None:
        hardware = hardware_for_device(hardware, settings.evaluation_config().device)
        ensure_local_probe(hardware, Console(stderr=True))
        settings = settings.model_copy(update={"hardware": hardware})
    Console(stderr=True).print(f"OpenEnv environment for {problem} on http://{host}:{port} (ws://{host}:{port}/ws)")
    serve(problem, settings, host=host, port=port, max_sessions=max_sessions)
