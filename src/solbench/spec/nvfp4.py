"""NVFP4 block-scaled matrix products on the CPU: `torch._scaled_mm`'s result, by dequantise-then-multiply.

torch's CPU build refuses `torch._scaled_mm` on float4_e2m1fn_x2 data with float8_e4m3fn block scales
("Invalid scaling configuration"), which SOL-ExecBench's NVFP4 references call. This module computes
the same product exactly as the GPU defines it: each 4-bit E2M1 value times its 16-element block's
E4M3 scale is exact in fp32, the products accumulate in fp32 (fp64 when the caller asks for fp64
output, as the golden run does), and the result is cast to `out_dtype` once.

The module imports nothing but torch, on purpose: the evaluator applies it to the trusted reference
by rewriting the reference's `torch._scaled_mm` calls (`spec.cpu_reference`), and a solution that
must run NVFP4 on the CPU may ship this file as one of its sources and call `scaled_mm` from it
explicitly (the reference packaged as a solution on the CPU does exactly that). torch itself is
never patched, so the sandbox's integrity guard sees the torch it snapshotted.
"""

from __future__ import annotations

import torch

BLOCK = 16
"""Elements of K sharing one E4M3 scale (NVFP4's block size)."""
_E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
"""The value of each 4-bit code: bit 3 is the sign, bits 0-2 an E2M1 magnitude."""


def is_nvfp4_call(mat_a: torch.Tensor, mat_b: torch.Tensor) -> bool:
    """Whether a `_scaled_mm` call is an NVFP4 product (both operands packed 4-bit)."""
    return str(mat_a.dtype) == str(mat_b.dtype) == "torch.float4_e2m1fn_x2"  # a name older torch builds lack


def unpack_fp4(packed: torch.Tensor) -> torch.Tensor:
    """float4_e2m1fn_x2 (..., n) -> float32 (..., 2n): the low nibble is the even element, the high the odd."""
    codes = packed.view(torch.uint8)
    table = torch.tensor(_E2M1_VALUES, dtype=torch.float32, device=packed.device)
    low = table[(codes & 0x0F).long()]
    high = table[(codes >> 4).long()]
    return torch.stack((low, high), dim=-1).reshape(*codes.shape[:-1], codes.shape[-1] * 2)


def unswizzle_scales(blocked: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """The (rows, cols) scale matrix from cuBLAS's blocked layout, as `_scaled_mm` takes it for NVFP4.

    The blocked layout tiles the (rows padded to 128, cols padded to 4) matrix into 128x4 tiles, tile
    row-major, and stores each tile as 32 rows of (4 row groups x 4 columns): row ``r = 32*i + j`` of a
    tile, column ``c``, sits at ``j*16 + i*4 + c`` (upstream's `convert_to_blocked_format_for_pytorch_scaled_mm`).
    """
    row_tiles, col_tiles = -(-rows // 128), -(-cols // 4)
    expected = row_tiles * col_tiles * 512
    if blocked.numel() != expected:
        raise ValueError(
            f"NVFP4 scales: {blocked.numel()} values for a {rows}x{cols} scale matrix in the blocked "
            f"layout (expected {expected})"
        )
    tiles = blocked.reshape(row_tiles, col_tiles, 32, 4, 4)  # (tile row, tile col, j, i, c)
    matrix = tiles.permute(0, 3, 2, 1, 4).reshape(row_tiles * 128, col_tiles * 4)  # (tile row, i, j, tile col, c)
    return matrix[:rows, :cols]


def dequantize(packed: torch.Tensor, blocked_scales: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """(rows, k/2) packed fp4 with blocked E4M3 scales -> (rows, k) in `dtype` (exact in fp32 and wider)."""
    values = unpack_fp4(packed).to(dtype)
    rows, k = values.shape
    if k % BLOCK:
        raise ValueError(f"NVFP4: K = {k} is not a multiple of the block size {BLOCK}")
    scales = unswizzle_scales(blocked_scales, rows, k // BLOCK).to(dtype)
    return (values.reshape(rows, k // BLOCK, BLOCK) * scales.unsqueeze(-1)).reshape(rows, k)


def nvfp4_scaled_mm(
    mat_a: torch.Tensor,
    mat_b: torch.Tensor,
    scale_a: torch.Tensor,
    scale_b: torch.Tensor,
    bias: torch.Tensor | None = None,
    out_dtype: torch.dtype | None = None,
    scale_result: torch.Tensor | None = None,
) -> torch.Tensor:
    """`torch._scaled_mm` for NVFP4 operands: A (M, K/2) and B (K/2, N) packed (B usually a transposed (N, K/2)
    view), each with its blocked E4M3 scales; the product accumulated in fp32 (fp64 for fp64 output)."""
    out_dtype = out_dtype or torch.bfloat16
    wide = torch.float64 if out_dtype == torch.float64 else torch.float32
    a = dequantize(mat_a, scale_a, wide)  # (M, K)
    b = dequantize(mat_b.transpose(0, 1), scale_b, wide)  # (N, K): packing runs along K
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"NVFP4: inner dimensions differ ({a.shape[1]} and {b.shape[1]})")
    result = a @ b.transpose(0, 1)
    if scale_result is not None:
        result = result * scale_result.to(wide)
    if bias is not None:
        result = result + bias.to(wide)
    return result.to(out_dtype)


def scaled_mm(
    mat_a: torch.Tensor,
    mat_b: torch.Tensor,
    scale_a: torch.Tensor,
    scale_b: torch.Tensor,
    bias: torch.Tensor | None = None,
    scale_result: torch.Tensor | None = None,
    out_dtype: torch.dtype | None = None,
    use_fast_accum: bool = False,
) -> torch.Tensor:
    """A drop-in for `torch._scaled_mm` (same parameters): NVFP4 operands on the CPU are emulated exactly,
    every other call goes to torch unchanged."""
    if mat_a.device.type == "cpu" and is_nvfp4_call(mat_a, mat_b):
        return nvfp4_scaled_mm(
            mat_a, mat_b, scale_a, scale_b, bias=bias, out_dtype=out_dtype, scale_result=scale_result
        )
    # torch binds _scaled_mm at import (from torch._C._VariableFunctions) but its __all__ lists no private ops
    return torch._scaled_mm(  # pyright: ignore[reportPrivateImportUsage]  # torch's __all__ omits private ops
        mat_a,
        mat_b,
        scale_a,
        scale_b,
        bias=bias,
        scale_result=scale_result,
        out_dtype=out_dtype,
        use_fast_accum=use_fast_accum,
    )
