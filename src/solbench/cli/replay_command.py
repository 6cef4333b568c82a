"""`solbench replay PATH`: evaluate again what a stored run recorded, and compare.

What PATH is decides how it is replayed (`REPLAYERS`, tried in order): an optimisation run folder
(it holds journal.jsonl), or a leaderboard submission's download bundle (one JSON file); another kind
of record adds a (matches, replay) pair.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path

import typer

from solbench.cli.common import UsageError


def replay(
    path: Path = typer.Argument(
        ...,
        help="An optimisation run folder (holding journal.jsonl), or a submission's "
        "download bundle (GET /api/v1/submissions/ID/bundle).",
    ),
    candidate: list[str] = typer.Option(
        [], "--candidate", help="Replay this candidate (ROUND-K); repeatable (default: all)."
    ),
    best: bool = typer.Option(False, "--best", help="Replay only the run's final best candidate."),
    json_output: bool = typer.Option(False, "--json", help="Print only the comparison as JSON on stdout."),
    seed: int | None = typer.Option(
        None,
        "--seed",
        min=0,
        help="An optimisation run: make every workload's inputs from this seed (a failure's input_seed) "
        "instead of a fresh secret one, to replay the inputs it failed on.",
    ),
) -> None:
    """Re-evaluate candidates of a stored optimisation run in a fresh environment, or a leaderboard submission
    from its bundle, and compare statuses (and cheat verdicts, rewards) and latencies with the record. Exit status
    0 when statuses and verdicts agree, 1 when not."""
    for matches, replay_path in REPLAYERS:
        if matches(path):
            agrees = replay_path(path, candidate=candidate, best=best, json_output=json_output, seed=seed)
            if not agrees:
                raise typer.Exit(1)
            return
    raise UsageError(
        f"{path}: nothing to replay there (expected a `solbench optimize` run folder with journal.jsonl, "
        "or a submission bundle .json file)"
    )


def _is_optimize_run(path: Path) -> bool:
    return path.is_dir() and (path / "journal.jsonl").is_file()


def _replay_optimize_run(
    path: Path, *, candidate: list[str], best: bool, json_output: bool, seed: int | None = None
) -> bool:
    from solbench.optimize.replay import replay_run

    report = replay_run(path, candidate or None, best_only=best, seed=seed)
    if json_output:
        value = dataclasses.asdict(report)
        value["agrees"] = report.agrees
        sys.stdout.write(json.dumps(value, default=str) + "\n")
        return report.agrees
    for item in report.candidates:
        verdict = "agrees" if item.agrees else "DIFFERS"
        print(
            f"{item.candidate_id}: {verdict} · reward recorded {_number(item.recorded_reward)}, "
            f"replayed {_number(item.replayed_reward)}"
            + (
                f" · cheat recorded {item.recorded_cheat}, replayed {item.replayed_cheat}"
                if item.recorded_cheat != item.replayed_cheat
                else ""
            )
        )
        for workload in item.workloads:
            print(
                f"  {workload.workload}: {workload.recorded_status} → {workload.replayed_status} · "
                f"{_ms(workload.recorded_latency_ms)} → {_ms(workload.replayed_latency_ms)} · "
                f"input seed {_seed(workload.recorded_seed)} → {_seed(workload.replayed_seed)}"
            )
    print(f"{sum(c.agrees for c in report.candidates)}/{len(report.candidates)} candidate(s) agree")
    return report.agrees


def _seed(value: int | None) -> str:
    return "-" if value is None else str(value)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f} ms"


def _is_bundle(path: Path) -> bool:
    return path.is_file()  # the bundle reader names the file and what is wrong with it when it is not one


def _replay_bundle(path: Path, *, candidate: list[str], best: bool, json_output: bool, seed: int | None = None) -> bool:
    from solbench.service.bundle import replay_bundle

    if candidate or best or seed is not None:
        raise UsageError(
            f"{path}: --candidate, --best and --seed apply to an optimisation run's candidates; a bundle "
            "holds one submission"
        )
    report = replay_bundle(path)
    if json_output:
        sys.stdout.write(json.dumps({**report.model_dump(mode="json"), "agrees": report.same_statuses}) + "\n")
        return report.same_statuses
    print(
        f"{report.problem} (version {report.problem_version[:12]}): measured on {report.original_hardware} with "
        f"harness {report.original_harness}, replayed with harness {report.harness_version}"
    )
    for row in report.rows:
        ratio = "-" if row.ratio is None else f"{row.ratio:.2f}x"
        print(
            f"  {row.workload}: {row.original_status} → {row.replay_status} · {_ms(row.original_ms)} → "
            f"{_ms(row.replay_ms)} ({ratio})"
        )
    print(f"{sum(r.same_status for r in report.rows)}/{len(report.rows)} workload(s) with the same status")
    return report.same_statuses


REPLAYERS: list[tuple[Callable[[Path], bool], Callable[..., bool]]] = [
    (_is_optimize_run, _replay_optimize_run),
    (_is_bundle, _replay_bundle),
]
"""(does PATH hold this kind of record, replay it and say whether it agrees), tried in order."""
