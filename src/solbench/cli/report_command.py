"""`solbench report RUNS…`: agent metrics (fast_p, pass@k, mean S with held-out workloads) per problem and set."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from solbench.optimize.metrics import DEFAULT_FAST_P, DEFAULT_PASS_K


def report_runs(
    runs: list[Path] = typer.Argument(
        ...,
        help="Optimize run folders (or their journal.jsonl), env-history files, exported trajectories, or folders "
        "holding runs below them.",
    ),
    fast_p: list[float] = typer.Option(
        list(DEFAULT_FAST_P), "--fast-p", help="A speedup threshold p for fast_p; repeatable."
    ),
    pass_k: list[int] = typer.Option(list(DEFAULT_PASS_K), "--pass-k", help="A k for pass@k; repeatable."),
    json_output: bool = typer.Option(False, "--json", help="Print only the metrics as JSON on stdout."),
) -> None:
    """Agent metrics over optimize runs and env histories, per problem and per set: fast_p (the share of
    rollouts whose final, held-out-checked solution is correct and faster than T_b by more than p), pass@k
    (unbiased, over every evaluated candidate) and mean S over every workload, held-out included (0 when the
    final solution is not correct). Definitions: docs/optimize.md#agent-metrics-solbench-report."""
    from solbench.optimize.metrics import agent_metrics
    from solbench.optimize.trajectory_sources import load_trajectories

    metrics = agent_metrics(load_trajectories(runs), fast_p=fast_p, pass_k=pass_k)
    if json_output:
        sys.stdout.write(metrics.model_dump_json() + "\n")
        return
    print("per problem")
    print(_table(_problem_rows(metrics), left=2))
    print("\nper set: means over its problems; pass@k over those with n >= k (their count in brackets)")
    print(_table(_set_rows(metrics), left=1))


def _metric_header(metrics) -> list[str]:
    return [*(f"pass@{k}" for k in metrics.pass_k), *(f"fast_{p:g}" for p in metrics.fast_p_thresholds), "mean S"]


def _problem_rows(metrics) -> list[list[str]]:
    rows = [["set", "problem", "rollouts", "final correct", "n", "c", *_metric_header(metrics), "best speedup"]]
    for p in metrics.problems:
        rows.append(
            [
                p.set,
                p.problem,
                str(p.rollouts),
                f"{p.final_correct}/{p.rollouts}",
                str(p.samples),
                str(p.correct_samples),
                *_metric_cells(p),
                "-" if p.best_speedup is None else f"{p.best_speedup:.2f}x",
            ]
        )
    return rows


def _set_rows(metrics) -> list[list[str]]:
    rows = [["set", "problems", "rollouts", *_metric_header(metrics)]]
    for s in metrics.sets:
        rows.append([s.set, str(s.problems), str(s.rollouts), *_metric_cells(s, s.pass_at_k_problems)])
    return rows


def _metric_cells(row, covered: dict[str, int] | None = None) -> list[str]:
    cells = []
    for k, value in row.pass_at_k.items():
        count = f" ({covered[k]})" if covered is not None else ""
        cells.append("-" if value is None else f"{value:.3f}{count}")
    cells += [f"{value:.3f}" for value in row.fast_p.values()]
    return [*cells, f"{row.mean_score:.3f}"]


def _table(rows: list[list[str]], left: int) -> str:
    """Plain columns, the first `left` ones (names) left-aligned, numbers right-aligned: nothing is ever cut off."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.ljust(width) if i < left else cell.rjust(width) for i, (cell, width) in enumerate(zip(row, widths))
        ).rstrip()
        for row in rows
    )
