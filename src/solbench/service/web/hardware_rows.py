"""The hardware table of the status page: the scored hardware and every worker's, with their peak figures."""

from __future__ import annotations

from solbench.service.web import views


def hardware_rows(scored: str, workers: list[views.WorkerRow]) -> list[views.HardwareRow]:
    """One row per hardware id (the service's own first); peaks from the hardware database where it knows the id."""
    from solbench.errors import SolbenchError
    from solbench.hardware import lookup

    ids = [scored] + sorted({w.hardware for w in workers} - {scored})
    rows = []
    for hardware_id in ids:
        try:
            spec = lookup(hardware_id)
        except SolbenchError:
            spec = None
        peak = max(spec.tensor_flops.values(), default=0.0) if spec is not None else 0.0
        peak = max(peak, max(spec.vector_flops.values(), default=0.0)) if spec is not None else None
        rows.append(views.HardwareRow(
            id=hardware_id, name=spec.name if spec is not None else "not in the hardware database",
            workers=sum(1 for w in workers if w.hardware == hardware_id),
            memory_bandwidth_bytes_per_s=spec.memory_bandwidth_bytes_per_s if spec is not None else None,
            peak_flops_per_s=peak or None))
    return rows
