"""Published T_SOL figures beside solbench's: where a problem folder carries them, and the ratio.

SOL-ExecBench publishes a `sol_ms` per workload (computed by SOLAR for a B200 at 1500 MHz). A
problem folder imported from it may carry them in `metadata.json` (`sol.per_workload[i].sol_ms`,
in `workload.jsonl` order, as in ../shared/sol-execbench-sample). They are shown beside solbench's
T_SOL, never used in its place: they are not always reachable under the scored protocol.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from solbench.spec.problem import Problem

METADATA_FILE = "metadata.json"
PUBLISHED_HARDWARE = "B200_1500MHz"
"""The hardware the published figures were computed for: a ratio means something only there."""
PUBLISHED_RESOLUTION_MS = 1e-4
"""Published `sol_ms` values are rounded to 0.0001 ms."""


@dataclass(frozen=True)
class Comparison:
    uuid: str
    t_sol_ms: float
    published_ms: float
    ratio: float | None
    """solbench's T_SOL / the published one; None where the published figure is 0 (rounded away)."""


def published_sol(problem: Problem) -> dict[str, float]:
    """Workload uuid -> published sol_ms, from the folder's metadata.json; {} where it has none."""
    path = Path(problem.root) / METADATA_FILE
    if not path.is_file():
        return {}
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
        entries = metadata["sol"]["per_workload"]
    except (ValueError, KeyError, TypeError):
        return {}
    if not isinstance(entries, list) or len(entries) != len(problem.workloads):
        return {}
    found = {}
    for workload, entry in zip(problem.workloads, entries):
        value = entry.get("sol_ms") if isinstance(entry, dict) else None
        if isinstance(value, (int, float)) and value >= 0:
            found[workload.uuid] = float(value)
    return found


def compare(results, published: dict[str, float]) -> list[Comparison]:
    """One comparison per analysed workload that has a published figure."""
    rows = []
    for result in results:
        value = published.get(result.workload.uuid)
        if value is None:
            continue
        ratio = result.t_sol_ms / value if value > 0 else None
        rows.append(Comparison(uuid=result.workload.uuid, t_sol_ms=result.t_sol_ms, published_ms=value, ratio=ratio))
    return rows
