"""The problem's reference program, run in the trusted parent (never inside the sandbox).

The source is written to a real file before import: decorators such as @triton.jit read their
function's source with `inspect`, which needs one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

from solbench.sandbox.calling import normalize_outputs
from solbench.spec.definition import Definition
from solbench.spec.dtypes import lookup_dtype

_UPCAST_TO_GOLDEN = ("float32", "float16", "bfloat16")


class ReferenceError(Exception):
    """The reference raised or returned the wrong outputs: the workload is INVALID_REFERENCE."""


class ReferenceProgram:
    def __init__(self, definition: Definition, device: str):
        self.definition = definition
        self.device = device
        self.output_names = list(definition.outputs)
        if device.startswith("cpu") and "triton" in definition.reference:
            os.environ.setdefault("TRITON_INTERPRET", "1")  # run @triton.jit references in the interpreter
        digest = hashlib.sha1(definition.reference.encode()).hexdigest()[:12]
        self._directory = Path(tempfile.mkdtemp(prefix="solbench-reference-"))
        path = self._directory / f"reference_{digest}.py"
        path.write_text(definition.reference, encoding="utf-8")
        module_name = f"solbench_reference_{digest}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        self.module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = self.module
        try:
            spec.loader.exec_module(self.module)  # trusted: the problem's own reference code
        except Exception as error:
            raise ReferenceError(f"importing the reference failed: {type(error).__name__}: {error}") from error

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
            raise ReferenceError(f"the reference raised {type(error).__name__}: {error}") from error

    def run_golden(self, inputs: list) -> list | None:
        """The reference on float64 copies of its floating inputs, or None where it cannot run so.

        References that fix their own dtypes internally still get as much precision as they allow.
        """
        import torch

        upcast = [v.to(torch.float64) if isinstance(v, torch.Tensor) and str(v.dtype).removeprefix("torch.")
                  in _UPCAST_TO_GOLDEN else v for v in inputs]
        try:
            outputs = self.run(upcast)
        except ReferenceError:
            return None
        expected = [lookup_dtype(t.dtype) for t in self.definition.outputs.values()]
        if any(not d.is_floating for d in expected):
            return None
        return [o.to(torch.float64) for o in outputs]

    def close(self) -> None:
        import shutil

        shutil.rmtree(self._directory, ignore_errors=True)

