"""What a worker reports about the hardware it evaluates on, for the status page.

The worker resolves its hardware id itself: `local` means the worker's own CPU probe, which the server (often
another machine) cannot know. Peaks are floating-point rates (int8 matrix rates are operations, not FLOPs).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class HardwareFigures(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    memory_bandwidth_bytes_per_s: float
    bfloat16_flops_per_s: float
    """Dense bf16 matrix peak (tensor cores, AMX, or the fastest path a bf16 matmul may take)."""
    float32_flops_per_s: float
    """fp32 peak of elementwise work (CUDA cores, SIMD FMAs)."""


def hardware_figures(hardware_id: str) -> HardwareFigures | None:
    """The figures of `hardware_id` as this machine resolves it; None where the database does not know the id
    (or `local` has not been probed here)."""
    from solbench.errors import SolbenchError
    from solbench.hardware import lookup

    try:
        spec = lookup(hardware_id)
    except SolbenchError:
        return None
    return HardwareFigures(
        name=spec.name,
        memory_bandwidth_bytes_per_s=spec.memory_bandwidth_bytes_per_s,
        bfloat16_flops_per_s=spec.matrix_rate("bfloat16")[0],
        float32_flops_per_s=spec.vector_rate("float32"),
    )
