"""T_b on this hardware: the fastest correct candidate per workload, from a run's stored traces.

Candidates are the reference in eager mode, the reference under torch.compile, and any optimized
baseline solutions a suite ships; a candidate counts for a workload only where it PASSED there.
"""

from __future__ import annotations

from pathlib import Path

from solbench.runner.jobs import COMPILED_REFERENCE, REFERENCE
from solbench.runner.store import TraceStore
from solbench.score.baselines import Baseline
from solbench.spec.trace import EvaluationStatus
from solbench.spec.trace_files import read_traces

SOURCE_NAMES = {REFERENCE: "reference (eager)", COMPILED_REFERENCE: "reference (torch.compile)"}


def fastest_correct(out: Path, hardware_id: str, candidates: list[str]) -> tuple[list[Baseline], list[str]]:
    """One Baseline per (problem, workload) that some candidate passed; notes for workloads none passed."""
    best: dict[tuple[str, str], Baseline] = {}
    seen: set[tuple[str, str]] = set()
    for path in TraceStore(out).all_trace_files():
        solution = path.stem
        if solution not in candidates:
            continue
        for trace in read_traces(path):
            key = (trace.definition, trace.workload.uuid)
            seen.add(key)
            performance = trace.evaluation.performance
            if trace.evaluation.status is not EvaluationStatus.PASSED or performance is None \
                    or not performance.latency_ms:
                continue
            if key not in best or performance.latency_ms < best[key].latency_ms:
                best[key] = Baseline(definition=trace.definition, workload=trace.workload.uuid, hardware=hardware_id,
                                     latency_ms=performance.latency_ms,
                                     source=SOURCE_NAMES.get(solution, f"solution {solution}"))
    notes = [f"{definition} workload {workload}: no candidate passed, no baseline"
             for definition, workload in sorted(seen - set(best))]
    return [best[k] for k in sorted(best)], notes


def merge(existing: list[Baseline], measured: list[Baseline]) -> list[Baseline]:
    """New measurements replace old ones for the same (problem, workload, hardware); the rest stay."""
    merged = {(b.definition, b.workload, b.hardware.upper()): b for b in existing}
    merged.update({(b.definition, b.workload, b.hardware.upper()): b for b in measured})
    return [merged[k] for k in sorted(merged)]
