"""Published figures -> baselines entries: SOL-ExecBench's per-workload `baseline_latency_ms` (T_b on a B200
at 1500 MHz) and `sol_ms` (its T_SOL), from a problem folder's metadata.json, in workload.jsonl order."""

from __future__ import annotations

from solbench.scoring.baselines import Baseline
from solbench.spec.problem import Problem

PUBLISHED_HARDWARE = "B200_1500MHz"
"""sol.published's PUBLISHED_HARDWARE (not imported: the sol package imports torch); a test checks they agree."""


def published_baselines(
    problem: Problem, metadata: dict | None, revision: str | None
) -> tuple[list[Baseline], str | None]:
    """The baselines entries of one problem, and why there are none where the metadata has figures
    that cannot be paired with the workloads (None when all paired, or when there are no figures)."""
    if metadata is None:
        return [], None
    sol = metadata.get("sol")
    if not isinstance(sol, dict) or not sol.get("available"):
        return [], None
    if sol.get("sol_is_dummy"):
        return [], "sol.sol_is_dummy: the published figures are placeholders; not used"
    entries = sol.get("per_workload")
    if not isinstance(entries, list) or len(entries) != len(problem.workloads):
        count = len(entries) if isinstance(entries, list) else 0
        return [], (
            f"sol.per_workload: {count} figures for {len(problem.workloads)} workloads; "
            "they cannot be paired, none used"
        )
    revision = revision or (metadata.get("source") or {}).get("resolved_sha") or ""
    source = f"published: SOL-ExecBench {revision}".strip()
    baselines = []
    for index, (workload, entry) in enumerate(zip(problem.workloads, entries)):
        if not isinstance(entry, dict):
            return [], f"sol.per_workload[{index}]: not an object; none used"
        axes = entry.get("axes") or {}
        differing = [k for k, v in workload.axes.items() if k in axes and axes[k] != v]
        if differing:
            axis = differing[0]
            return [], (
                f"sol.per_workload[{index}].axes.{axis}: {axes[axis]} where workload line {index + 1} has "
                f"{workload.axes[axis]}; the figures are for other workloads, none used"
            )
        latency, sol_ms = entry.get("baseline_latency_ms"), entry.get("sol_ms")
        if not isinstance(latency, (int, float)) or latency <= 0:
            continue  # no published T_b for this workload: nothing to pair
        baselines.append(
            Baseline(
                definition=problem.name,
                workload=workload.uuid,
                hardware=PUBLISHED_HARDWARE,
                latency_ms=float(latency),
                source=source,
                sol_ms=float(sol_ms) if isinstance(sol_ms, (int, float)) and sol_ms >= 0 else None,
            )
        )
    return baselines, None
