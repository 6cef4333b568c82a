"""OpCost: what one operation must at least do, in summable pieces."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

PRECISION_RANK = {
    "float4": 0,
    "float8": 1,
    "int8": 1,
    "bfloat16": 2,
    "float16": 2,
    "tf32": 3,
    "float32": 3,
    "int": 3,
    "bool": 3,
    "float64": 4,
}


@cache
def precision_of(dtype) -> str:
    """The rate class of a torch dtype: float4, float8, int8, bfloat16, float16, float32, float64, int, bool."""
    name = str(dtype).removeprefix("torch.")
    if name.startswith("float4"):
        return "float4"
    if name.startswith("float8"):
        return "float8"
    if name in ("int8", "uint8"):
        return "int8"
    if name in ("float64", "float32", "float16", "bfloat16", "bool"):
        return name
    if name.startswith("complex"):
        return "float64" if name == "complex128" else "float32"
    return "int"


@dataclass(frozen=True)
class OpCost:
    """FLOPs by unit class, special-function operations, and the bytes an unfused kernel would move."""

    matrix_flops: dict[str, float] = field(default_factory=dict)
    """Operand precision -> FLOPs on matrix units (tensor cores; the BLAS path on a CPU)."""
    vector_flops: dict[str, float] = field(default_factory=dict)
    """Compute precision -> FLOPs on vector units (CUDA cores)."""
    special_ops: float = 0.0
    """Transcendentals (exp, log, tanh, rsqrt, ...): SFU or emulated."""
    bytes_read: int = 0
    bytes_written: int = 0
    formula: str = ""

    @property
    def flops(self) -> float:
        return sum(self.matrix_flops.values()) + sum(self.vector_flops.values())

    def __add__(self, other: OpCost) -> OpCost:
        return OpCost(
            matrix_flops=_merge(self.matrix_flops, other.matrix_flops),
            vector_flops=_merge(self.vector_flops, other.vector_flops),
            special_ops=self.special_ops + other.special_ops,
            bytes_read=self.bytes_read + other.bytes_read,
            bytes_written=self.bytes_written + other.bytes_written,
        )


def _merge(left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
    merged = dict(left)
    for key, value in right.items():
        merged[key] = merged.get(key, 0.0) + value
    return merged
