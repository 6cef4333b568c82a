"""The problem's reference program, run in the trusted parent (never inside the sandbox)."""

from __future__ import annotations

from solbench.evaluate.correctness import as_comparable
from solbench.evaluate.errors import EvaluationError
from solbench.sandbox.calling import normalize_outputs
from solbench.spec.cpu_reference import cpu_runnable_source
from solbench.spec.definition import Definition
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.reference_code import ReferenceImportError, import_reference

_UPCAST_TO_GOLDEN = ("float32", "float16", "bfloat16")


class ReferenceFailure(EvaluationError):
    """The reference raised or returned the wrong outputs: the workload is INVALID_REFERENCE."""


class ReferenceProgram:
    def __init__(self, definition: Definition, device: str):
        self.definition = definition
        self.device = device
        self.output_names = list(definition.outputs)
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

    def run_golden(self, inputs: list) -> list | None:
        """The reference on float64 copies of its floating inputs, or None where it cannot run so.

        References that fix their own dtypes internally still get as much precision as they allow.
        """
        import torch

        upcast = [v.to(torch.float64) if isinstance(v, torch.Tensor) and str(v.dtype).removeprefix("torch.")
                  in _UPCAST_TO_GOLDEN else v for v in inputs]
        try:
            outputs = self.run(upcast)
        except ReferenceFailure:
            return None
        expected = [lookup_dtype(t.dtype) for t in self.definition.outputs.values()]
        if any(not d.is_floating for d in expected):
            return None
        return [as_comparable(o).to(torch.float64) for o in outputs]  # packed fp4 cannot cast directly

    def close(self) -> None:
        import shutil

        shutil.rmtree(self._directory, ignore_errors=True)

