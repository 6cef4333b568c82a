"""`solbench replay PATH`: evaluate again what a stored run recorded, and compare.

What PATH is decides how it is replayed (`REPLAYERS`, tried in order): an optimisation run folder
(it holds journal.jsonl) today; other kinds (a service download bundle) add a (matches, replay) pair.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Optional

import typer

from solbench.cli.common import UsageError


def replay(
    path: Path = typer.Argument(..., help="An optimisation run folder (holding journal.jsonl)."),
    candidate: list[str] = typer.Option([], "--candidate",
                                        help="Replay this candidate (ROUND-K); repeatable (default: all)."),
    best: bool = typer.Option(False, "--best", help="Replay only the run's final best candidate."),
    json_output: bool = typer.Option(False, "--json", help="Print only the comparison as JSON on stdout."),
) -> None:
    """Re-evaluate candidates of a stored run in a fresh environment and compare statuses, cheat verdicts,
    rewards and latencies with the record. Exit status 0 when statuses and verdicts agree, 1 when not."""
    for matches, replay_path in REPLAYERS:
        if matches(path):
            agrees = replay_path(path, candidate=candidate, best=best, json_output=json_output)
            if not agrees:
                raise typer.Exit(1)
            return
    raise UsageError(f"{path}: nothing to replay there (expected a `solbench optimize` run folder with journal.jsonl)")


def _is_optimize_run(path: Path) -> bool:
    return path.is_dir() and (path / "journal.jsonl").is_file()


def _replay_optimize_run(path: Path, *, candidate: list[str], best: bool, json_output: bool) -> bool:
    from solbench.optimize.replay import replay_run

    report = replay_run(path, candidate or None, best_only=best)
    if json_output:
        value = dataclasses.asdict(report)
        value["agrees"] = report.agrees
        sys.stdout.write(json.dumps(value, default=str) + "\n")
        return report.agrees
    for item in report.candidates:
        verdict = "agrees" if item.agrees else "DIFFERS"
        print(f"{item.candidate_id}: {verdict} · reward recorded {_number(item.recorded_reward)}, "
              f"replayed {_number(item.replayed_reward)}"
              + (f" · cheat recorded {item.recorded_cheat}, replayed {item.replayed_cheat}"
                 if item.recorded_cheat != item.replayed_cheat else ""))
        for workload in item.workloads:
            print(f"  {workload.workload}: {workload.recorded_status} → {workload.replayed_status} · "
                  f"{_ms(workload.recorded_latency_ms)} → {_ms(workload.replayed_latency_ms)}")
    print(f"{sum(c.agrees for c in report.candidates)}/{len(report.candidates)} candidate(s) agree")
    return report.agrees


def _number(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ms(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.4f} ms"


REPLAYERS: list[tuple[Callable[[Path], bool], Callable[..., bool]]] = [(_is_optimize_run, _replay_optimize_run)]
"""(does PATH hold this kind of record, replay it and say whether it agrees), tried in order."""
