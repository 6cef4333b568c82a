"""The roofline of one problem: its roofs from the stored SOL analysis, a point per user's best submission.

A submission's point is its total work over all public workloads: intensity = ΣFLOPs / Σbytes and
achieved rate = ΣFLOPs / ΣT_k. The roofs are those of the same workloads on the scored hardware: the
compute roof ΣFLOPs / Σ(compute time at peak) (the rate of this problem's mix of matrix, vector and
special work) and the memory roof Σbytes / Σ(memory time at peak bandwidth).
"""

from __future__ import annotations

from dataclasses import dataclass

from solbench.service.web.charts import RooflinePoint


@dataclass(frozen=True)
class ProblemRoofline:
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    points: list[RooflinePoint]


def problem_roofline(costs: dict | None, best: list, public: list[str]) -> ProblemRoofline | None:
    """The roofline over the `public` workload uuids (the stored costs also cover held-out ones, which never
    appear on a page); None when the analysis kept no costs for them or they have no work at all."""
    costs = {uuid: costs[uuid] for uuid in public if costs and uuid in costs}
    if not costs or len(costs) != len(public):
        return None
    flops = sum(c.get("flops", 0.0) for c in costs.values())
    moved = sum(c.get("bytes", 0.0) for c in costs.values())
    compute_s = sum(c.get("compute_ms", 0.0) for c in costs.values()) / 1e3
    memory_s = sum(c.get("memory_ms", 0.0) for c in costs.values()) / 1e3
    if flops <= 0 or moved <= 0 or compute_s <= 0 or memory_s <= 0:
        return None
    points = []
    for user, submission_id, result in best:
        point = _point(costs, result.traces or [], f"{user} #{submission_id}", f"/submissions/{submission_id}")
        if point is not None:
            points.append(point)
    return ProblemRoofline(peak_flops_per_s=flops / compute_s, bandwidth_bytes_per_s=moved / memory_s, points=points)


def _point(costs: dict, traces: list, label: str, href: str) -> RooflinePoint | None:
    """None unless every workload of `costs` has a measured time: a partial total is not comparable."""
    latencies_ms = {}
    for trace in traces:
        performance = (trace.get("evaluation") or {}).get("performance") or {}
        if performance.get("latency_ms"):
            latencies_ms[trace.get("workload", {}).get("uuid")] = performance["latency_ms"]
    if any(uuid not in latencies_ms for uuid in costs):
        return None
    flops = sum(c.get("flops", 0.0) for c in costs.values())
    moved = sum(c.get("bytes", 0.0) for c in costs.values())
    seconds = sum(latencies_ms[uuid] for uuid in costs) / 1e3
    if flops <= 0 or moved <= 0 or seconds <= 0:
        return None
    return RooflinePoint(label, flops / moved, flops / seconds, href)
