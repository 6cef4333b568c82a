"""The hardware table of the status page: the hardware the workers evaluate on, and the scored hardware.

A worker reports its own figures (`local` is the worker's CPU, which the server cannot see), so those come first;
the server's hardware database fills in the scored id where no worker has reported it.
"""

from __future__ import annotations

from solbench.service.web import views
from solbench.service.worker_hardware import HardwareFigures, hardware_figures

SERVER_LOCAL = "local"
"""The server's probe of its own CPU says nothing about the workers' machines: never shown for them."""


def hardware_rows(scored: str, workers: list[views.WorkerRow]) -> list[views.HardwareRow]:
    """One row per hardware id (the scored one first), from the newest report of a live worker on it."""
    reported: dict[str, HardwareFigures] = {}
    for worker in sorted(workers, key=lambda w: (w.state == "gone", w.last_seen is None)):
        if worker.figures is not None:
            reported.setdefault(worker.hardware, worker.figures)
    rows = []
    for hardware_id in [scored] + sorted({w.hardware for w in workers} - {scored}):
        figures, source = reported.get(hardware_id), "reported by its workers"
        if figures is None and hardware_id != SERVER_LOCAL:
            figures, source = hardware_figures(hardware_id), "the hardware database"
        count = sum(1 for w in workers if w.hardware == hardware_id and w.state != "gone")
        if figures is None:
            rows.append(
                views.HardwareRow(
                    id=hardware_id,
                    workers=count,
                    name=(
                        "each worker's own CPU: figures appear when one reports"
                        if hardware_id == SERVER_LOCAL
                        else "not in the hardware database"
                    ),
                )
            )
            continue
        rows.append(
            views.HardwareRow(
                id=hardware_id,
                name=figures.name,
                workers=count,
                source=source,
                memory_bandwidth_bytes_per_s=figures.memory_bandwidth_bytes_per_s,
                bfloat16_flops_per_s=figures.bfloat16_flops_per_s,
                float32_flops_per_s=figures.float32_flops_per_s,
            )
        )
    return rows
