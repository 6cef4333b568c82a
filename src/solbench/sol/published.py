"""Published T_SOL figures beside solbench's: where a problem folder carries them, and the ratio.

SOL-ExecBench publishes a `sol_ms` per workload (computed by SOLAR for a B200 at 1500 MHz). A
problem folder imported from it may carry them in `metadata.json` (`sol.per_workload[i].sol_ms`,
in `workload.jsonl` order, as in ../shared/sol-execbench-sample), and `solbench suite import` writes
them into a baselines file (each entry's `sol_ms`). `published_sol` reads both, so `solbench sol`
and `solbench score --baselines` show the same figure. They are shown beside solbench's T_SOL,
never used in its place: they are not always reachable under the scored protocol.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

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


class ReferenceFigures(Protocol):
    """What `published_sol` needs of a baselines file (score.Baselines): the entry of a workload on a
    hardware, whose `sol_ms` is the reference T_SOL (None where the file gives none)."""

    def get(self, definition: str, workload: str, hardware: str) -> Any: ...


def published_sol(
    problem: Problem, baselines: ReferenceFigures | None = None, hardware_id: str = PUBLISHED_HARDWARE
) -> dict[str, float]:
    """Workload uuid -> published sol_ms on `hardware_id`: from the folder's metadata.json (whose figures
    are for PUBLISHED_HARDWARE), then from `baselines` entries that give `sol_ms`, which take precedence;
    {} where neither has any."""
    found = metadata_sol(problem) if hardware_id.lower() == PUBLISHED_HARDWARE.lower() else {}
    if baselines is not None:
        for workload in problem.workloads:
            value = getattr(baselines.get(problem.name, workload.uuid, hardware_id), "sol_ms", None)
            if isinstance(value, (int, float)) and value >= 0:
                found[workload.uuid] = float(value)
    return found


def metadata_sol(problem: Problem) -> dict[str, float]:
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


AGREEMENT = (0.5, 2.0)
"""Ratios (solbench / published) inside this range count as agreement; outside, `disagreement` says why."""
_FLOOR_MS = 1e-3
"""Published figures for tiny workloads sit at about 0.0004-0.0005 ms whatever the work: a floor."""


def disagreement(result, published_ms: float, hardware) -> str | None:
    """Why solbench's T_SOL and the published one differ by more than 2x, from the counts that differ;
    None inside [0.5, 2]. `result` is a WorkloadSol; `hardware` the HardwareSpec it was analysed for. With the
    op rows (`--explain`), the line also names the op that carries most of the binding count."""
    why = _class_of_disagreement(result, published_ms, hardware)
    if why is None or why.startswith(("rounding", "published floor")):
        return why
    op = dominant_op(result)
    return f"{why}; {op}" if op else why


_BOUND_COUNT = {
    "matrix": ("matrix_flops", "matrix FLOPs"),
    "vector": ("vector_flops", "vector FLOPs"),
    "special": ("special_ops", "special ops"),
    "memory": ("bytes", "bytes moved one by one"),
}


def dominant_op(result) -> str | None:
    """The op (name and operand shapes, its calls summed) carrying most of the count that binds T_SOL, with its
    share: where a disagreement lives. None without op rows (analysed without `explain`)."""
    rows = getattr(result, "ops", None)
    if not rows:
        return None
    field, label = _BOUND_COUNT.get(result.bound, _BOUND_COUNT["memory"])
    totals: dict[tuple[str, str], list] = {}
    for row in rows:
        entry = totals.setdefault((row.op, row.shapes), [0.0, 0, row.formula])
        entry[0] += getattr(row, field)
        entry[1] += 1
    total = sum(v[0] for v in totals.values())
    if total <= 0:
        return None
    (op, shapes), (amount, calls, formula) = max(totals.items(), key=lambda item: item[1][0])
    times = f" x {calls} calls" if calls > 1 else ""
    return f"op {op} ({shapes}){times} carries {amount / total:.0%} of the {total:.3g} {label} ({formula})"


def _class_of_disagreement(result, published_ms: float, hardware) -> str | None:
    ratio = result.t_sol_ms / published_ms if published_ms > 0 else None
    if ratio is not None and AGREEMENT[0] <= ratio <= AGREEMENT[1]:
        return None
    if published_ms <= PUBLISHED_RESOLUTION_MS / 2:
        return "rounding: the published figure is 0 at its 0.0001 ms resolution"
    assert ratio is not None  # published_ms > 0 past the rounding case
    if published_ms <= _FLOOR_MS and result.t_sol_ms < published_ms:
        return (
            f"published floor: the published figures do not go below about 0.0004 ms ({published_ms:g} ms here); "
            f"solbench's {result.bound}-bound work takes {result.t_sol_ms:.3g} ms"
        )
    matrix = result.flops_by_class.get("matrix", {})
    fp32 = matrix.get("float32", 0.0)
    record = getattr(result, "precision", None)
    applied = record.matrix_precision if record is not None else "fp32"
    if ratio > AGREEMENT[1] and result.bound == "matrix" and fp32 and applied not in ("bf16", "fp16"):
        from solbench.sol.precision import RATE_PRECISION

        rate, unit = hardware.matrix_rate(RATE_PRECISION[applied])
        as_bf16 = result.t_sol_ms - fp32 / rate * 1e3 + fp32 / hardware.matrix_rate("bfloat16")[0] * 1e3
        if record is None or record.policy == "strict":
            why = "--precision strict; see --precision tolerance"
        elif "not determined" in record.basis:
            why = "what the tolerance admits was not determined: too large to check on this CPU"
        else:
            why = "the workload's tolerance does not admit bf16 products"
        what = "fp32-accurate" if applied == "fp32" else applied
        return (
            f"peak used: {fp32:.3g} fp32 matrix FLOPs at the {what} rate ({unit}, {rate / 1e12:.0f} "
            f"TFLOP/s: {why}); at the bf16 tensor rate the published figure uses they take {as_bf16:.3g} ms "
            f"(ratio {as_bf16 / published_ms:.2g})"
        )
    output_bytes = getattr(result, "output_bytes", 0) or 0
    if ratio > AGREEMENT[1] and result.bound == "memory" and output_bytes:
        without = (result.bytes - output_bytes) / hardware.memory_bandwidth_bytes_per_s * 1e3
        share = output_bytes / result.bytes
        if share >= 0.4:  # an updated cache handed back is read and written whole: half the bytes each
            rest = (
                f"without them {without:.3g} ms (ratio {without / published_ms:.2g})"
                if without > 0
                else "they are the only compulsory traffic"
            )
            return (
                f"bytes counted as compulsory: outputs are {share:.0%} of the {result.bytes / 1e6:.3g} MB charged, "
                f"written whole (the protocol materialises expanded views and returned inputs inside the timed "
                f"region); {rest}"
            )
    if ratio > AGREEMENT[1] and result.bound == "memory":
        cache = getattr(hardware, "cache_bytes", 0.0)
        where = (
            f"; they would fit in the {cache / 2**20:.0f} MiB L2, but the protocol flushes it"
            if cache and result.bytes <= cache
            else ""
        )
        return (
            f"bytes counted as compulsory: {result.bytes / 1e6:.3g} MB at DRAM bandwidth "
            f"({hardware.memory_bandwidth_bytes_per_s / 1e12:.1f} TB/s{where}); "
            f"the published figure implies {published_ms * hardware.memory_bandwidth_bytes_per_s / 1e9:.3g} MB "
            f"at that bandwidth"
        )
    if ratio > AGREEMENT[1] and result.bound in ("vector", "special"):
        vector_flops = sum(result.flops_by_class.get("vector", {}).values())
        return (
            f"FLOPs of decomposed ops: {result.bound}-bound, {vector_flops:.3g} "
            f"vector FLOPs and {result.flops_by_class.get('special', 0):.3g} special ops counted per element "
            "(the published figure counts these ops' FLOPs differently)"
        )
    if ratio < AGREEMENT[0]:
        return (
            f"published counts more: solbench's {result.bound} bound is {result.t_sol_ms:.3g} ms; the published "
            f"{published_ms:g} ms implies {published_ms * hardware.memory_bandwidth_bytes_per_s / 1e9:.3g} MB at "
            "DRAM bandwidth or more FLOPs than the reference's ops need (unfused intermediates, dense work "
            "where solbench counts only the rows or pairs used)"
        )
    return f"{result.bound}-bound; the published figure counts other work"
