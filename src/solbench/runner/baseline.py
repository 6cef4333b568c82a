"""T_b on this hardware: the fastest correct candidate per workload, from a run's stored traces.

Candidates are the reference in eager mode, the reference under torch.compile, and any optimized
baseline solutions a suite ships; a candidate counts for a workload only where it PASSED there.
"""

from __future__ import annotations

from pathlib import Path

from solbench.runner.jobs import COMPILED_REFERENCE, REFERENCE
from solbench.runner.store import TraceStore
from solbench.scoring.baselines import Baseline
from solbench.spec.trace import EvaluationStatus, Trace
from solbench.spec.trace_files import read_traces

SOURCE_NAMES = {REFERENCE: "reference (eager)", COMPILED_REFERENCE: "reference (torch.compile)"}


def fastest_correct(out: Path, hardware_id: str, candidates: list[str]) -> tuple[list[Baseline], list[str]]:
    """One Baseline per (problem, workload) that some candidate passed; notes for workloads none passed."""
    passed: list[Baseline] = []
    seen: set[tuple[str, str]] = set()
    for path in TraceStore(out).all_trace_files():
        solution = path.stem
        if solution not in candidates:
            continue
        traces = read_traces(path)
        seen.update((trace.definition, trace.workload.uuid) for trace in traces)
        passed += baselines_from_traces(traces, hardware_id, SOURCE_NAMES.get(solution, f"solution {solution}"))
    best = fastest(passed)
    notes = [
        f"{definition} workload {workload}: no candidate passed, no baseline"
        for definition, workload in sorted(seen - {(b.definition, b.workload) for b in best})
    ]
    return best, notes


def baselines_from_traces(traces: list[Trace], hardware_id: str, source: str) -> list[Baseline]:
    """A Baseline for every trace that PASSED with a latency."""
    found: list[Baseline] = []
    for t in traces:
        assert t.evaluation is not None, "baselines are taken from evaluated traces"
        performance = t.evaluation.performance
        if t.evaluation.status is EvaluationStatus.PASSED and performance and performance.latency_ms:
            found.append(
                Baseline(
                    definition=t.definition,
                    workload=t.workload.uuid,
                    hardware=hardware_id,
                    latency_ms=performance.latency_ms,
                    source=source,
                )
            )
    return found


def fastest(*groups: list[Baseline]) -> list[Baseline]:
    """Per (problem, workload, hardware) the lowest latency among all groups; the first seen wins a tie."""
    best: dict[tuple[str, str, str], Baseline] = {}
    for group in groups:
        for baseline in group:
            key = (baseline.definition, baseline.workload, baseline.hardware.upper())
            if key not in best or baseline.latency_ms < best[key].latency_ms:
                best[key] = baseline
    return [best[key] for key in sorted(best)]


def merge(existing: list[Baseline], measured: list[Baseline]) -> list[Baseline]:
    """New measurements replace old ones for the same (problem, workload, hardware); the rest stay."""
    merged = {(b.definition, b.workload, b.hardware.upper()): b for b in existing}
    merged.update({(b.definition, b.workload, b.hardware.upper()): b for b in measured})
    return [merged[k] for k in sorted(merged)]
