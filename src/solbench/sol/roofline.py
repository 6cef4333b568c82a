"""The roofline: T_SOL as the slowest of the units working in parallel and the memory system."""

from __future__ import annotations

from dataclasses import dataclass

from solbench.hardware.spec import HardwareSpec
from solbench.sol.costs import OpCost


@dataclass(frozen=True)
class Roofline:
    matrix_s: float
    vector_s: float
    special_s: float
    memory_s: float

    @property
    def t_sol_s(self) -> float:
        return max(self.matrix_s, self.vector_s, self.special_s, self.memory_s)

    @property
    def bound(self) -> str:
        """The roof that decides T_SOL: memory, matrix, vector or special."""
        times = {"memory": self.memory_s, "matrix": self.matrix_s, "vector": self.vector_s, "special": self.special_s}
        return max(times, key=lambda roof: times[roof])


def matrix_seconds(matrix_flops: dict[str, float], hardware: HardwareSpec, fp32_as: str = "float32") -> float:
    """Matrix time; fp32 matrix work runs at `fp32_as`'s rate (float32: fp32-accurate; lower where the precision
    policy admits it, see sol/precision.py)."""
    return sum(
        flops / hardware.matrix_rate(fp32_as if precision == "float32" else precision)[0]
        for precision, flops in matrix_flops.items()
    )


def roofline(cost: OpCost, compulsory_bytes: int, hardware: HardwareSpec, fp32_as: str = "float32") -> Roofline:
    """Units overlap, so the lower bound is the maximum of their times, never their sum."""
    matrix = matrix_seconds(cost.matrix_flops, hardware, fp32_as)
    vector = sum(flops / hardware.vector_rate(precision) for precision, flops in cost.vector_flops.items())
    special = cost.special_ops / hardware.special_ops_per_s
    memory = compulsory_bytes / hardware.memory_bandwidth_bytes_per_s
    return Roofline(matrix_s=matrix, vector_s=vector, special_s=special, memory_s=memory)
