"""The dtype names of the format and what each one means in memory.

Names are those of SOL-ExecBench definitions; the torch attribute is looked up lazily so that
loading problems never imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    name: str
    torch_name: str
    bits: int
    kind: str  # "float", "int", "bool"

    @property
    def is_floating(self) -> bool:
        return self.kind == "float"

    @property
    def is_low_precision_float(self) -> bool:
        """Formats too coarse for randn-based golden comparisons (fp8, fp4)."""
        return self.kind == "float" and self.bits <= 8

    def torch_dtype(self):
        import torch

        return getattr(torch, self.torch_name)


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        DType("float64", "float64", 64, "float"),
        DType("float32", "float32", 32, "float"),
        DType("float16", "float16", 16, "float"),
        DType("bfloat16", "bfloat16", 16, "float"),
        DType("float8_e4m3fn", "float8_e4m3fn", 8, "float"),
        DType("float8_e5m2", "float8_e5m2", 8, "float"),
        DType("float8_e4m3fnuz", "float8_e4m3fnuz", 8, "float"),
        DType("float8_e5m2fnuz", "float8_e5m2fnuz", 8, "float"),
        DType("float8_e8m0fnu", "float8_e8m0fnu", 8, "float"),
        # Two FP4 (e2m1) values packed in one byte; the shape counts bytes. Upstream reads both names so.
        DType("float4_e2m1fn_x2", "float4_e2m1fn_x2", 8, "float"),
        DType("float4_e2m1", "float4_e2m1fn_x2", 8, "float"),
        DType("int64", "int64", 64, "int"),
        DType("int32", "int32", 32, "int"),
        DType("int16", "int16", 16, "int"),
        DType("int8", "int8", 8, "int"),
        DType("bool", "bool", 8, "bool"),
    )
}


def same_bits(a, b) -> bool:
    """Bitwise equality of two values: tensors of any dtype in the table (packed fp4 has no comparison
    kernel) compared NaN-safe by their bytes; anything else by ==."""
    import torch

    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return a == b
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return torch.equal(a.contiguous().reshape(-1).view(torch.uint8), b.contiguous().reshape(-1).view(torch.uint8))


def lookup_dtype(name: str) -> DType:
    """Return the dtype called `name`; raises KeyError naming the known ones."""
    try:
        return DTYPES[name]
    except KeyError:
        raise KeyError(f"unknown dtype {name!r} (known: {', '.join(DTYPES)})") from None
