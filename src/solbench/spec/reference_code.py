"""Importing a definition's reference program as a module: the one place its source is executed.

Loading a problem never calls this; the evaluator and the analyzer do, because the reference is
trusted code (DESIGN.md). The source goes to a real file first: decorators such as @triton.jit
read their function's source with `inspect`, which needs one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from solbench.errors import SolbenchError
from solbench.spec.definition import Definition
from solbench.spec.generator_constants import bind_generator_constants


class ReferenceImportError(SolbenchError):
    """Importing the reference raised; the message names the exception."""


def launches_triton(reference: str) -> bool:
    """The reference (may) launch Triton kernels: on the CPU they run under Triton's interpreter, on real memory,
    so the analyzer neither records them on shape-only tensors nor rewrites their loops."""
    return "triton" in reference


def import_reference(definition: Definition, device: str) -> tuple[ModuleType, Path]:
    """The imported module and the temporary folder holding its file (the caller removes it)."""
    if device.startswith("cpu") and launches_triton(definition.reference):
        # Triton reads this once, at import: a CPU run of a @triton.jit reference needs its interpreter,
        # and the process-wide setting is harmless because nothing else here launches Triton kernels.
        os.environ.setdefault("TRITON_INTERPRET", "1")
    # A generator's locals named as const axes follow the workload's sizes (the same literal at the declared ones)
    source = bind_generator_constants(definition)
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    folder = Path(tempfile.mkdtemp(prefix="solbench-reference-"))
    path = folder / f"reference_{digest}.py"
    path.write_text(source, encoding="utf-8")
    module_name = f"solbench_reference_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ReferenceImportError(f"importing the reference failed: no module loader for {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)  # trusted: the problem's own reference code
    except BaseException as error:  # `sys.exit()` at import too: the folder goes either way
        sys.modules.pop(module_name, None)
        shutil.rmtree(folder, ignore_errors=True)  # nobody else knows of it: the caller gets no folder to remove
        if not isinstance(error, Exception):
            raise
        raise ReferenceImportError(f"importing the reference failed: {type(error).__name__}: {error}") from error
    return module, folder
