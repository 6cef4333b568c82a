"""Hardware specs: the data-file schema (every number with its source) and the resolved rates T_SOL uses."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

SPECIAL_OPS_PER_CLOCK_PER_SM = 16
"""Transcendental results (exp2, log2, rsqrt, sin, cos) per clock per SM from the SFUs: CUDA C++
Programming Guide, "Arithmetic Instructions" throughput table, compute capability 5.x to 9.0."""
EMULATED_TRANSCENDENTAL_FLOPS = 8
"""A transcendental emulated on the FMA pipes (range reduction + degree-3 polynomial, as FlashAttention-4
does for exp2) costs about 4 FMAs = 8 FLOPs; kernels can split work between SFUs and FMAs."""
PACKED_HALF_FACTOR = 2
"""16-bit and 8-bit elementwise work runs as packed pairs (HFMA2): twice the FP32 CUDA-core rate."""


class Figure(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float = Field(gt=0)
    source: str = Field(min_length=1)


class DeviceFile(BaseModel):
    """One file under hardware/data/: published figures, or a derivation from another device."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    kind: str = "gpu"
    aliases: list[str] = Field(default_factory=list)
    note: str | None = None
    sm_count: Figure | None = None
    boost_clock_mhz: Figure | None = None
    tensor_clock_mhz: Figure | None = None
    """The clock the tensor-core peaks are quoted at, where it differs from the boost clock."""
    memory_bandwidth_bytes_per_s: Figure | None = None
    memory_bytes: Figure | None = None
    l2_bytes: Figure | None = None
    peak_flops: dict[str, dict[str, Figure]] = Field(default_factory=dict)
    """unit ("tensor", "cuda_core") -> precision -> dense peak in FLOP/s."""
    derived_from: str | None = None
    locked_sm_clock_mhz: Figure | None = None


@dataclass(frozen=True)
class HardwareSpec:
    """Resolved peak rates in base units (FLOP/s, bytes/s, bytes); `sources` says where each came from."""

    id: str
    name: str
    kind: str
    memory_bandwidth_bytes_per_s: float
    tensor_flops: dict[str, float]
    vector_flops: dict[str, float]
    special_ops_per_s: float
    cache_bytes: float = 0.0
    memory_bytes: float = 0.0
    sm_count: int = 0
    sm_clock_mhz: float = 0.0
    sources: dict[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()

    def matrix_rate(self, precision: str) -> tuple[float, str]:
        """FLOP/s of matrix work whose operands are `precision`, and the unit that provides it.

        float32 takes the faster of CUDA cores and 3xTF32 emulation (full fp32 accuracy from three
        TF32 products); a format without its own tensor rate runs at the next wider one it converts to.
        """
        tensor = self.tensor_flops
        if precision == "float32":
            options = [
                (self.vector_flops.get("float32", 0.0), "cuda_core.float32"),
                (tensor.get("tf32", 0.0) / 3, "tensor.tf32/3"),
                (tensor.get("float32", 0.0), "tensor.float32"),
            ]
            return max(options)
        if precision == "float64":
            return max(
                (tensor.get("float64", 0.0), "tensor.float64"),
                (self.vector_flops.get("float64", 0.0), "cuda_core.float64"),
            )
        for candidate in _WIDER.get(precision, (precision,)):
            if candidate in tensor:
                return tensor[candidate], f"tensor.{candidate}"
            if candidate == "float32":
                return self.matrix_rate("float32")
        return self.matrix_rate("float32")

    def vector_rate(self, precision: str) -> float:
        if precision == "float64":
            return self.vector_flops.get("float64", self.vector_flops["float32"])
        if precision in ("float16", "bfloat16", "float8", "float4") and self.kind == "gpu":
            return self.vector_flops["float32"] * PACKED_HALF_FACTOR
        return self.vector_flops["float32"]


_WIDER = {
    "float4": ("float4", "float8", "float16", "float32"),
    "float8": ("float8", "float16", "float32"),
    "int8": ("int8", "float8", "float16", "float32"),
    "bfloat16": ("bfloat16", "float16", "float32"),
    "float16": ("float16", "bfloat16", "float32"),
    "tf32": ("tf32", "float32"),
}
