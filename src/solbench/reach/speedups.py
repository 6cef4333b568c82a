"""Per-problem speedups for the projection, from traces, a leaderboard export, or an assumption.

Each source yields ``problem -> Speedup(geometric mean, spread of log speedup)``:

- traces (``--traces DIR``: every ``*.jsonl`` below it): per PASSED workload, the reference's latency over
  the solution's, both timed in the same run; per problem the best solution's geometric mean over its
  workloads and the standard deviation of the log speedups (the workloads' spread);
- a leaderboard export (``--speedups FILE.json``): ``{"speedups": {"problem": x | [x, ...]}}``, a list
  giving a spread;
- ``--assume-speedup X``: every covered problem at X, no spread.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from solbench.json_files import read_json_file
from solbench.reach.errors import ReachError


@dataclass(frozen=True)
class Speedup:
    mean: float
    """Geometric mean speedup (reference time / solution time)."""
    log_std: float = 0.0
    """Standard deviation of the log speedups: the spread the projection samples."""
    count: int = 1
    source: str = "assumed"


def _summary(values: list[float], source: str) -> Speedup:
    logs = [math.log(v) for v in values]
    return Speedup(
        mean=math.exp(statistics.fmean(logs)),
        log_std=statistics.stdev(logs) if len(logs) > 1 else 0.0,
        count=len(values),
        source=source,
    )


def speedups_from_traces(folder: Path) -> dict[str, Speedup]:
    from solbench.spec.trace_files import read_traces

    folder = Path(folder)
    files = [folder] if folder.is_file() else sorted(folder.rglob("*.jsonl"))
    if not files:
        raise ReachError(f"--traces {folder}: no *.jsonl trace files there")
    per_solution: dict[tuple[str, str], list[float]] = defaultdict(list)
    for path in files:
        for trace in read_traces(path):
            evaluation = trace.evaluation
            performance = evaluation.performance if evaluation else None
            if evaluation is None or evaluation.status.value != "PASSED" or performance is None:
                continue
            if performance.latency_ms > 0 and performance.reference_latency_ms > 0:
                per_solution[(trace.definition, trace.solution or "")].append(
                    performance.reference_latency_ms / performance.latency_ms
                )
    best: dict[str, Speedup] = {}
    for (definition, _), values in per_solution.items():
        summary = _summary(values, "traces")
        if definition not in best or summary.mean > best[definition].mean:
            best[definition] = summary
    return best


def speedups_from_export(path: Path) -> dict[str, Speedup]:
    data = read_json_file(path, "speedups file", ReachError)
    table = data.get("speedups") if isinstance(data, dict) else None
    if not isinstance(table, dict):
        raise ReachError(f'{path}: expected {{"speedups": {{"problem": x or [x, ...]}}}}')
    result = {}
    for name, value in table.items():
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, (int, float)) and v > 0 for v in values):
            raise ReachError(f"{path}: speedups.{name} must be a positive number or a list of them")
        result[name] = _summary([float(v) for v in values], "export")
    return result


def assumed(problems: list[str], speedup: float) -> dict[str, Speedup]:
    if speedup <= 0:
        raise ReachError("--assume-speedup must be positive")
    return {name: Speedup(mean=speedup) for name in problems}
