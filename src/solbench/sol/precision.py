"""One precision policy for correctness and T_SOL: which matrix precision a workload's tolerance admits.

A problem whose tensors are fp32 says little about how its matrix products must be computed: a
loose tolerance (atol 2e-3, say) is met by bf16 tensor-core products, a tight one only by
fp32-accurate ones. Two policies:

- ``strict``: fp32 means fp32-accurate. T_SOL charges fp32 matrix work at the fp32-accurate rate
  (3xTF32 or CUDA cores) and correctness rejects a solution much farther from the float64 golden
  result than the reference (the precision-downgrade rule).
- ``tolerance``: per workload, the reference is run on the CPU with its matrix products (mm, bmm,
  addmm, baddbmm, linear, matmul, einsum, convolution, fused attention) computed in bf16, fp16 and
  TF32, and the lowest precision whose outputs still meet the workload's tolerance against the
  reference's own outputs is *admissible*. That one precision drives both the matrix rate of T_SOL and the
  downgrade rule (a solution as accurate as the reference computed at that precision passes).

``auto`` (the default) is ``tolerance`` for problems imported from SOL-ExecBench (tag
``origin:sol-execbench`` or a folder with its ``metadata.json``), whose published T_SOL uses the
bf16 rate and whose upstream checker accepts bf16 kernels, and ``strict`` for every other problem.

Low precision is emulated exactly enough and fast: each fp32 operand is rounded to the low format
(bf16/fp16: cast there and back; TF32: mantissa rounded to 10 bits, to nearest even) and the product is
taken in fp32, as a tensor core accumulates in fp32. Results are cached under the solbench cache
folder (``precision/``), keyed by the definition, the workload (tolerance included) and this file.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from solbench.cache_records import read_record, record_key, write_record
from solbench.spec.problem import Problem
from solbench.spec.trace import PRECISION_POLICIES, PrecisionRecord
from solbench.spec.workload import Tolerance, Workload

POLICIES = PRECISION_POLICIES
MatrixPrecision = Literal["bf16", "fp16", "tf32", "fp32"]
"""PrecisionRecord.matrix_precision's values."""
MATRIX_PRECISIONS: tuple[MatrixPrecision, ...] = ("bf16", "fp16", "tf32", "fp32")
"""Tried lowest first; fp32 (fp32-accurate) is admissible by definition."""
RATE_PRECISION = {"bf16": "bfloat16", "fp16": "float16", "tf32": "tf32", "fp32": "float32"}
"""The name HardwareSpec.matrix_rate knows each matrix precision by."""
UNIT_ROUNDOFF = {"bf16": 2.0**-8, "fp16": 2.0**-11, "tf32": 2.0**-11, "fp32": 2.0**-24}
UPSTREAM_TAG = "origin:sol-execbench"
UPSTREAM_METADATA = "metadata.json"
RELATIVE_NORM_FLOOR = 0.02
"""As evaluation/correctness.py's rule: ||out - ref|| / ||ref|| may reach max(this, 2 x rtol)."""
CACHE_FORMAT = 1


# --- the policy ---------------------------------------------------------------------------------
def is_upstream(problem: Problem) -> bool:
    """Imported from SOL-ExecBench: tagged so by the importer, or a folder carrying its metadata.json."""
    tags = problem.definition.tags or []
    if UPSTREAM_TAG in tags:
        return True
    root = getattr(problem, "root", None)
    return root is not None and (Path(root) / UPSTREAM_METADATA).is_file()


def resolve_policy(problem: Problem, policy: str) -> str:
    """``strict`` or ``tolerance`` for `problem` under `policy` (``auto``: tolerance for upstream problems)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown precision policy {policy!r} (known: {', '.join(POLICIES)})")
    if policy != "auto":
        return policy
    return "tolerance" if is_upstream(problem) else "strict"


def strict_record() -> PrecisionRecord:
    return PrecisionRecord(
        policy="strict",
        matrix_precision="fp32",
        basis="strict: fp32 matrix work is fp32-accurate (3xTF32 or CUDA cores)",
    )


# --- emulating low-precision matrix products ----------------------------------------------------
def round_operand(tensor, precision: str):
    """`tensor` (fp32) with its values rounded to `precision`, kept in fp32; other dtypes unchanged."""
    import torch

    if not isinstance(tensor, torch.Tensor) or tensor.dtype != torch.float32 or precision == "fp32":
        return tensor
    if precision == "bf16":
        return tensor.to(torch.bfloat16).to(torch.float32)
    if precision == "fp16":
        return tensor.to(torch.float16).to(torch.float32)
    if precision == "tf32":
        return _tf32(tensor)
    raise ValueError(f"unknown matrix precision {precision!r}")


def _tf32(tensor):
    """`tensor`'s fp32 values with their 23-bit mantissas rounded to 10 bits, to nearest even, by Veltkamp's split:
    with s = x * (2^13 + 1), s - (s - x) is x rounded to 24 - 13 significant bits. Three float passes, on any
    layout, where rounding the bits as integers took seven and a copy of a transposed weight (integer ops are slow
    here). NaN stays NaN; where the split gives NaN for a number (±inf, or |x| above about 4e34, where s overflows)
    those elements take the bitwise rounding, which keeps ±inf and rounds overflow to ±inf as hardware does.
    fp32 subnormals (below 2^-126, absent from real data) round to 11 significant bits rather than on the
    subnormal grid."""
    import torch

    scaled = tensor * 8193.0
    rounded = scaled.sub_(scaled - tensor)
    if math.isfinite(float(rounded.sum())):  # one read, no mask: no NaN anywhere (the usual case)
        return rounded
    failed = torch.isnan(rounded)
    return torch.where(failed & ~torch.isnan(tensor), _tf32_bits(tensor), rounded)


def _tf32_bits(tensor):
    """`_tf32` by integer arithmetic on the bits: + 0xFFF + (bit 13), the low 13 bits cleared."""
    import torch

    bits = tensor.contiguous().view(torch.int32)
    rounded = bits >> 13
    rounded &= 1
    rounded += 0xFFF
    rounded += bits
    rounded &= -8192
    return rounded.view(torch.float32)  # `tensor`'s shape, laid out contiguously


def _matrix_ops():
    import torch

    aten = torch.ops.aten
    names = (
        "mm",
        "bmm",
        "addmm",
        "baddbmm",
        "addbmm",
        "mv",
        "addmv",
        "dot",
        "vdot",
        "_addmm_activation",
        "convolution",
        "_convolution",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
    )
    return {getattr(aten, name) for name in names if hasattr(aten, name)}


@contextmanager
def matrix_products_at(precision: str):
    """Inside, every matrix product's fp32 operands are rounded to `precision` (products and sums in fp32)."""
    from torch.utils import _pytree as pytree
    from torch.utils._python_dispatch import TorchDispatchMode

    if precision == "fp32":
        yield
        return
    ops = _matrix_ops()

    class _LowPrecisionProducts(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False  # nothing is compiled here: no per-op dynamo guard, and no import of torch._dynamo (3-4 s)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func.overloadpacket in ops:
                args = pytree.tree_map(lambda v: round_operand(v, precision), args)
                kwargs = pytree.tree_map(lambda v: round_operand(v, precision), kwargs)
            return func(*args, **kwargs)

    with _LowPrecisionProducts():
        yield


# --- is a precision admissible? ----------------------------------------------------------------
def _tensors(outputs) -> list:
    import torch

    if isinstance(outputs, torch.Tensor):
        return [outputs]
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    return [o for o in outputs if isinstance(o, torch.Tensor)] if isinstance(outputs, (list, tuple)) else []


def tolerance_error(out, ref, tolerance: Tolerance) -> tuple[bool, float]:
    """(whether `out` meets `tolerance` against `ref` as correctness's value rules judge it, ||out-ref||/||ref||)."""
    return OutputComparison(out, ref).judge(tolerance)


class OutputComparison:
    """One output against its reference, with what every tolerance reads worked out once (float64 copies, the
    difference, the norms, the reference's magnitude): a check judges each output under every tolerance still open,
    and an imported problem's CPU-tier check carries as many tolerances as its published workloads have."""

    def __init__(self, out, ref):
        import torch

        self._fixed: tuple[bool, float] | None = None
        self._parts: _Parts | None = None
        if not (out.is_floating_point() and ref.is_floating_point()) or out.shape != ref.shape:
            self._fixed = bool(out.shape == ref.shape and torch.equal(out, ref)), 0.0
        elif out.numel() == 0:
            self._fixed = True, 0.0
        else:
            out, ref = out.double(), ref.double()
            finite = math.isfinite(float(out.sum()) + float(ref.sum()))  # a float64 sum cannot overflow
            self._parts = _finite_parts(out, ref) if finite else _general_parts(out, ref)

    def judge(self, tolerance: Tolerance) -> tuple[bool, float]:
        """(whether the output meets `tolerance`, ||out-ref||/||ref||)."""
        if self._parts is None:
            assert self._fixed is not None  # one of the two is set
            return self._fixed
        return self._parts.judge(tolerance)


@dataclass
class _Parts:
    """A float64 comparison's tolerance-free parts."""

    difference: Any
    magnitude: Any
    """|ref|."""
    same: Any
    """Where NaN or inf may occur: the elements that match whatever the tolerance (equal, or both NaN); else None."""
    reference_norm: float
    error_norm: float
    scaled: tuple[float, Any] | None = None
    """(rtol, rtol x |ref|) for the last rtol judged: tolerances often differ in atol alone, and one copy at a time
    keeps the memory a comparison holds bounded whatever the number of tolerances."""

    def judge(self, tolerance: Tolerance) -> tuple[bool, float]:
        import torch

        if self.scaled is None or self.scaled[0] != tolerance.max_rtol:
            self.scaled = None  # the old copy freed before the new one is made
            self.scaled = (tolerance.max_rtol, self.magnitude * tolerance.max_rtol)
        scaled = self.scaled[1]
        within = self.difference <= scaled + tolerance.max_atol
        if self.same is not None:
            within |= self.same
        matched = int(torch.count_nonzero(within)) / self.difference.numel()
        return _verdict(matched, self.reference_norm, self.error_norm, self.difference, tolerance)


def _finite_parts(out, ref) -> _Parts:
    """Every value of the float64 `out` and `ref` finite: half the passes of `_general_parts`, the same verdicts.
    Equal values differ by exactly 0, within any bound (atol and rtol are not negative), and every element counts
    in the norms."""
    import torch

    difference = (out - ref).abs_()
    return _Parts(
        difference=difference,
        magnitude=ref.abs(),
        same=None,
        reference_norm=float(torch.linalg.vector_norm(ref.reshape(-1))),
        error_norm=float(torch.linalg.vector_norm(difference.reshape(-1))),
    )


def _general_parts(out, ref) -> _Parts:
    """NaN and inf allowed in the float64 `out` and `ref`: NaN matches NaN, equal infinities match, and the norms
    are over the reference's finite elements."""
    import torch

    same = (out == ref) | (torch.isnan(out) & torch.isnan(ref))
    difference = torch.nan_to_num(torch.where(same, torch.zeros_like(out), (out - ref).abs()), nan=math.inf)
    finite = torch.isfinite(ref)
    any_finite = bool(finite.any())
    return _Parts(
        difference=difference,
        magnitude=ref.abs(),
        same=same,
        reference_norm=float(torch.linalg.vector_norm(ref[finite])) if any_finite else 0.0,
        error_norm=float(torch.linalg.vector_norm(difference[finite])) if any_finite else 0.0,
    )


def _verdict(
    matched: float, reference_norm: float, error_norm: float, difference, tolerance: Tolerance
) -> tuple[bool, float]:
    """The tolerance rules on a comparison's summary: the matched share, the error cap and the relative norm
    (skipped where the reference's norm is zero or overflowed, as a float64 output's may)."""
    relative = error_norm / reference_norm if reference_norm > 0 else (0.0 if error_norm == 0 else math.inf)
    passed = matched >= tolerance.required_matched_ratio
    if tolerance.max_error_cap is not None:
        passed &= float(difference.max()) <= tolerance.max_error_cap
    if reference_norm > 0 and math.isfinite(reference_norm):
        passed &= relative <= max(RELATIVE_NORM_FLOOR, 2 * tolerance.max_rtol)
    return bool(passed), relative


def check_admissible(
    run: Callable[[list], Any], inputs: list, reference_outputs, tolerance: Tolerance
) -> tuple[MatrixPrecision, dict[str, list[float]]]:
    """The lowest precision whose emulated run of `run(inputs)` meets `tolerance` against `reference_outputs`,
    and the relative error norms (one per output) of every precision tried."""
    [(precision, tried)] = check_admissible_under(run, inputs, reference_outputs, [tolerance])
    assert precision is not None  # no deadline: every precision is tried
    return precision, tried


def check_admissible_under(
    run: Callable[[list], Any],
    inputs: list,
    reference_outputs,
    tolerances: Sequence[Tolerance],
    deadline: float | None = None,
) -> list[tuple[MatrixPrecision | None, dict[str, list[float]]]]:
    """`check_admissible` for each of `tolerances`, from one emulated run per precision: a run's outputs are judged
    under every tolerance still open, so deciding many tolerances costs no more runs than deciding the strictest.
    No emulated run starts after `deadline` (a `time.monotonic()` value); a tolerance still open then gets None."""
    import time

    import torch

    truth = _tensors(reference_outputs)
    decided: list[MatrixPrecision | None] = [None] * len(tolerances)
    tried: list[dict[str, list[float]]] = [{} for _ in tolerances]
    for precision in MATRIX_PRECISIONS[:-1]:
        still_open = [index for index, found in enumerate(decided) if found is None]
        if not still_open:
            break
        if deadline is not None and time.monotonic() > deadline:
            return list(zip(decided, tried))
        try:
            with torch.no_grad(), matrix_products_at(precision):
                outputs = _tensors(run(inputs))
        except Exception:  # a reference that cannot run so (a dtype check, say) does not admit it
            continue
        if len(outputs) != len(truth):
            continue
        verdicts: dict[int, list[tuple[bool, float]]] = {index: [] for index in still_open}
        for out, ref in zip(outputs, truth):  # one output's comparison held at a time
            comparison = OutputComparison(out, ref)
            for index in still_open:
                verdicts[index].append(comparison.judge(tolerances[index]))
        for index in still_open:
            tried[index][precision] = [error for _, error in verdicts[index]]
            if all(passed for passed, _ in verdicts[index]):
                decided[index] = precision
    return [(found or "fp32", errors) for found, errors in zip(decided, tried)]


# --- the cache ----------------------------------------------------------------------------------
CACHE_FOLDER = "precision"
ANALYSIS_ORIGIN = "analysis"
"""The analyzer's inputs (draw 0) on the CPU; an evaluation's records are kept apart (its device, its inputs)."""


@functools.cache
def _code_identity() -> dict[str, str]:
    """This module's source hash and torch's version, read once per process (every lookup needs them)."""
    import torch

    return {"source": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16], "torch": torch.__version__}


def _key(problem: Problem, workload: Workload, origin: str) -> str:
    """What decides a record: the problem, the workload and its tolerance, this module's code, torch's version,
    and `origin` (the analysis's inputs on the CPU, or an evaluation's on its device), whose inputs the record's
    per-output errors were measured on."""
    material = {
        "format": CACHE_FORMAT,
        **_code_identity(),
        "origin": origin,
        "definition": problem.definition.model_dump(mode="json"),
        "workload": workload.model_dump(mode="json"),
        "tolerance": workload.effective_tolerance.model_dump(mode="json"),
    }
    return record_key(material)


def load_cached(problem: Problem, workload: Workload, origin: str = ANALYSIS_ORIGIN) -> PrecisionRecord | None:
    return read_record(PrecisionRecord, CACHE_FOLDER, _key(problem, workload, origin))


def store_cached(problem: Problem, workload: Workload, record: PrecisionRecord, origin: str = ANALYSIS_ORIGIN) -> None:
    """A cache that cannot be written costs a recheck, nothing else (cache_records.py)."""
    write_record(CACHE_FOLDER, _key(problem, workload, origin), record)


def checked_record(precision: MatrixPrecision, tried: dict[str, list[float]], where: str) -> PrecisionRecord:
    errors = ", ".join(f"{p} {max(e, default=0.0):.2g}" for p, e in tried.items())
    return PrecisionRecord(
        policy="tolerance",
        matrix_precision=precision,
        admitted_error=tried.get(precision),
        basis=f"tolerance: checked {where} (relative error by precision: {errors or 'none run'})",
    )


def workload_record(
    problem: Problem,
    workload: Workload,
    run: Callable[[list], Any],
    inputs: list,
    reference_outputs,
    origin: str = ANALYSIS_ORIGIN,
) -> PrecisionRecord:
    """The admissible precision of one workload, from the cache or checked now on these real inputs; `origin`
    names where the inputs come from (``analysis``, or ``evaluation <device>``)."""
    cached = load_cached(problem, workload, origin)
    if cached is not None:
        return cached
    precision, tried = check_admissible(run, inputs, reference_outputs, workload.effective_tolerance)
    record = checked_record(precision, tried, "on this workload")
    store_cached(problem, workload, record, origin)
    return record
