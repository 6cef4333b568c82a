"""The problem's reference program, run in the trusted parent (never inside the sandbox)."""

from __future__ import annotations

from solbench.evaluation.correctness import UNIT_ROUNDOFF, as_comparable
from solbench.evaluation.downgrade import DOWNGRADE_PRECISIONS, round_to_precision
from solbench.evaluation.errors import EvaluationError
from solbench.sandbox.calling import normalize_outputs
from solbench.spec.cpu_reference import cpu_runnable_source
from solbench.spec.definition import Definition
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.reference_code import ReferenceImportError, import_reference

_UPCAST_TO_GOLDEN = ("float32", "float16", "bfloat16")
"""Floating dtypes the golden run widens (to float64; the float32 fallback widens the two after float32)."""
FALLBACK_MIN_ROUNDOFF = 2.0**-11
"""A float32 golden result stands in for float64 only where every output's unit roundoff is at least this (fp16,
bf16, fp8, fp4): 2^13 times float32's."""
FALLBACK_MIN_REFERENCE_ERROR = 2.0**-16
"""For float32 (or wider) outputs, a float32 golden result stands in only where the reference is at least this far
from it (relative norm): 2^8 float32 roundoffs, so the golden result's own error is negligible against the 16
times the reference's error that the precision rule allows."""
_OUT_OF_MEMORY = ("out of memory", "can't allocate memory", "cannot allocate memory")


def _relative_error(value, golden) -> float:
    import torch

    norm = float(torch.linalg.vector_norm(golden))
    return float(torch.linalg.vector_norm(value - golden)) / norm if norm else 0.0


class _OutOfMemory(Exception):
    """The golden run needed more memory than the device has (not a failure of the reference)."""


def _out_of_memory(error: BaseException) -> bool:
    """Whether `error` (or what it wraps) is the allocator running out: torch.OutOfMemoryError on a GPU, the CPU
    allocator's "can't allocate memory"."""
    import torch

    for candidate in (error, error.__cause__):
        if isinstance(candidate, torch.OutOfMemoryError):
            return True
        if isinstance(candidate, RuntimeError) and any(m in str(candidate).lower() for m in _OUT_OF_MEMORY):
            return True
    return False


class ReferenceFailure(EvaluationError):
    """The reference raised or returned the wrong outputs: the workload is INVALID_REFERENCE."""


class ReferenceProgram:
    def __init__(self, definition: Definition, device: str):
        self.definition = definition
        self.device = device
        self.output_names = list(definition.outputs)
        self.golden_note: str | None = None
        self._float64_out_of_memory: str | None = None
        """Set by `run_golden` where the golden result was not the float64 one (out of memory): what was done."""
        if device.startswith("cpu"):  # the CUDA device it names -> the CPU; NVFP4 `_scaled_mm` -> spec.nvfp4
            definition = definition.model_copy(update={"reference": cpu_runnable_source(definition.reference)})
        try:
            self.module, self._directory = import_reference(definition, device)
        except ReferenceImportError as error:
            raise ReferenceFailure(str(error)) from error

    def run(self, inputs: list) -> list:
        """Outputs for `inputs`, normalised to one tensor per definition output."""
        import torch

        try:
            with torch.no_grad():
                returned = self.module.run(*inputs)
            if self.device.startswith("cuda"):
                torch.cuda.synchronize()
            return normalize_outputs(returned, self.output_names)
        except Exception as error:
            raise ReferenceFailure(f"the reference raised {type(error).__name__}: {error}") from error

    def run_golden(self, inputs: list, reference_outputs: list | None = None) -> list | None:
        """The reference on float64 copies of its floating inputs, or None where it cannot run so.

        References that fix their own dtypes internally still get as much precision as they allow. Where the
        float64 run does not fit the device (attention at native video sizes: float64 SDPA takes the math path,
        which holds every score, 103 GB for an 81-frame 480p Wan2.1 clip), the golden result is computed in
        float32 instead, but only where it is still far finer than what the precision rule allows: every output
        16-bit or narrower (float32's unit roundoff, 2^-24, is 2^13 times finer than theirs, and the rule's floor
        is 8 of theirs), or, for wider outputs, `reference_outputs` at least `FALLBACK_MIN_REFERENCE_ERROR` (2^8
        float32 roundoffs) from the float32 result in relative norm (a float32 output carrying bf16 work; the
        rule allows 16 times the reference's error). Otherwise no golden result (a float32 one would be no
        finer than the reference). Either way `golden_note` says what happened, for the trace.
        """
        self.golden_note = None
        expected = [lookup_dtype(t.dtype) for t in self.definition.outputs.values()]
        if any(not d.is_floating for d in expected):
            return None
        reason = self._float64_out_of_memory
        if reason is None:
            try:
                return self._golden_at(inputs, "float64")
            except _OutOfMemory as error:  # not tried again for this problem: the next inputs are no smaller
                reason = f"the float64 run ran out of memory ({str(error.__cause__ or error).splitlines()[0][:160]})"
                self._float64_out_of_memory = reason
        self._release_memory()
        wide = [d.torch_name for d in expected if UNIT_ROUNDOFF.get(d.torch_name, 0.0) < FALLBACK_MIN_ROUNDOFF]
        if wide and reference_outputs is None:
            self.golden_note = (
                f"not run: {reason}, and a float32 golden result need not be finer than the "
                f"{', '.join(sorted(set(wide)))} outputs"
            )
            return None
        try:
            golden = self._golden_at(inputs, "float32")
        except _OutOfMemory as error:
            self._release_memory()
            self.golden_note = f"not run: {reason}, and so did float32 ({str(error.__cause__ or error)[:120]})"
            return None
        if golden is None:
            self.golden_note = f"not run: {reason}, and the float32 run failed"
            return None
        if not wide:
            self.golden_note = f"float32: {reason}; every output is 16-bit or narrower"
            return golden
        assert reference_outputs is not None, "with wide outputs and no reference outputs it returned above"
        errors = [_relative_error(as_comparable(r).to(golden[0].dtype), g) for r, g in zip(reference_outputs, golden)]
        if min(errors) < FALLBACK_MIN_REFERENCE_ERROR:
            self.golden_note = (
                f"not run: {reason}, and the reference is within {min(errors):.2g} of the float32 "
                f"result (a float32 golden result would be no finer than the reference)"
            )
            return None
        self.golden_note = (
            f"float32: {reason}; the reference is at least {min(errors):.2g} from it (at least "
            f"{FALLBACK_MIN_REFERENCE_ERROR:.2g} needed)"
        )
        return golden

    def run_rounded(self, inputs: list, precision: str) -> list | None:
        """The reference's outputs (float64) on float64 copies of its floating inputs, those finer than `precision`
        rounded to it first: what computing in `precision` does to the inputs, for telling a precision downgrade
        from a wrong result (downgrade.py). None where it cannot run so: only that diagnosis is lost."""
        import torch

        step = DOWNGRADE_PRECISIONS[precision]
        rounded = [
            (
                (round_to_precision(v, precision) if UNIT_ROUNDOFF[name] < step else v.to(torch.float64))
                if isinstance(v, torch.Tensor) and (name := str(v.dtype).removeprefix("torch.")) in _UPCAST_TO_GOLDEN
                else v
            )
            for v in inputs
        ]
        try:
            outputs = self.run(rounded)
        except (ReferenceFailure, RuntimeError):
            self._release_memory()
            return None
        return [as_comparable(o).to(torch.float64) for o in outputs]

    def _golden_at(self, inputs: list, dtype_name: str) -> list | None:
        """Outputs (as float64) of the reference on `dtype_name` copies of its floating inputs no wider than it;
        None where the reference fails for another reason; raises _OutOfMemory where the device's memory ran out."""
        import torch

        dtype = getattr(torch, dtype_name)
        widen = (
            _UPCAST_TO_GOLDEN[_UPCAST_TO_GOLDEN.index(dtype_name) + 1 :]
            if dtype_name in _UPCAST_TO_GOLDEN
            else _UPCAST_TO_GOLDEN
        )
        try:
            upcast = [
                v.to(dtype) if isinstance(v, torch.Tensor) and str(v.dtype).removeprefix("torch.") in widen else v
                for v in inputs
            ]
            outputs = self.run(upcast)
        except (ReferenceFailure, RuntimeError) as error:
            if _out_of_memory(error):
                raise _OutOfMemory(str(error)) from error
            if isinstance(error, ReferenceFailure):
                return None
            raise
        return [as_comparable(o).to(torch.float64) for o in outputs]  # packed fp4 cannot cast directly

    def _release_memory(self) -> None:
        import gc

        gc.collect()
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()

    def close(self) -> None:
        import shutil

        shutil.rmtree(self._directory, ignore_errors=True)
