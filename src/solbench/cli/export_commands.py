"""`solbench export trajectories RUN_OR_ENV… -o FILE.jsonl`: rollouts as training data, one Trajectory a line."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True, help="Export records in documented formats.")


@app.command("trajectories")
def export_trajectories(
    runs: list[Path] = typer.Argument(
        ...,
        help="Optimize run folders (or their journal.jsonl), env-history files, or folders holding runs below them.",
    ),
    output: Path = typer.Option(..., "-o", "--output", help="The JSONL file to write (replaced if it exists)."),
) -> None:
    """Write each rollout's card, actions (candidate solutions), their feedback and the final re-measurement as
    one JSON line (solbench.optimize.trajectory.Trajectory, format_version 1; docs/agent-env.md#trajectories)."""
    from solbench.optimize.trajectory import write_trajectories
    from solbench.optimize.trajectory_sources import load_trajectories

    trajectories = load_trajectories(runs)
    write_trajectories(output, trajectories)
    steps = sum(len(t.steps) for t in trajectories)
    typer.echo(f"wrote {len(trajectories)} trajectory(ies), {steps} step(s): {output}", err=True)
