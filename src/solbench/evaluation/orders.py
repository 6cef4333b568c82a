"""Timing the solution and the reference in both orders, so that state one leaves behind favours neither.

The two run in separate processes, so no program state passes between them; the machine's state does:
clock and power state, caches beyond the flushed ones, the OS's page cache. Whichever is timed second
inherits what the first left. When the reference is timed in an evaluation, the solution's timing is split
into two halves around it (solution, reference, solution: an ABBA order), so a drift that is linear in time
weighs on both alike, and the halves' medians show how far the machine drifted meanwhile. A reference timing
reused from an earlier evaluation was not taken next to this solution, and the solution is timed in one go.
"""

from __future__ import annotations

from dataclasses import replace

from solbench.evaluation.outcome import timing_summary
from solbench.sandbox.measure import TimingPlan
from solbench.spec.trace import TimingSummary

DRIFT_WARNING = 0.10
"""The halves' medians differing by more than this share of the smaller one is worth a warning."""


def half_plan(plan: TimingPlan) -> TimingPlan:
    """One half of the solution's timing: half the budget and half the iteration cap, the same floor of samples."""
    return replace(
        plan, budget_s=plan.budget_s / 2, max_iterations=max(plan.min_iterations, -(-plan.max_iterations // 2))
    )


def in_both_orders(before: TimingSummary, after: TimingSummary) -> TimingSummary:
    """The solution's timing from its halves before and after the reference's, as one summary."""
    samples_s = [ms / 1e3 for ms in before.samples_ms + after.samples_ms]
    low, high = sorted((before.median_ms, after.median_ms))
    warnings = []
    if low > 0 and high / low - 1 > DRIFT_WARNING:  # first: the list is cut to 10
        warnings.append(
            f"the solution's median before the reference was timed ({before.median_ms:.4g} ms) and after it "
            f"({after.median_ms:.4g} ms) differ by {high / low - 1:.0%}: the machine's state drifted"
        )
    warnings += dict.fromkeys(before.warnings + after.warnings)
    merged = timing_summary(
        before.backend,
        samples_s,
        before.warmup + after.warmup,
        max(before.flush_bytes, after.flush_bytes),
        before.input_variants,
        warnings[:10],
        before.resolution_ms / 1e3 if before.resolution_ms else None,
        before.flush_mode,
        before.flush_note,
    )
    return merged.model_copy(update={"both_orders": True})
