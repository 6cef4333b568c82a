"""Python-hosted solutions (PyTorch, Triton, CuTe DSL, ...): import the entry file as a module."""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from pathlib import Path

from solbench.sandbox.builders.errors import BuildError
from solbench.sandbox.builders.sources import require_cuda, write_sources
from solbench.spec.solution import Language


class PythonModuleBuilder:
    @staticmethod
    def handles(spec) -> bool:
        return spec.is_python_hosted

    def build(self, solution, source_dir: Path, device: str):
        spec = solution.spec
        require_cuda(spec, device)
        if Language.TRITON in spec.normalized_languages and device.startswith("cpu"):
            # Triton reads this when it is first imported: kernels then run in its CPU interpreter.
            os.environ["TRITON_INTERPRET"] = "1"
        write_sources(solution, source_dir)
        sys.path.insert(0, str(source_dir))
        entry = source_dir / spec.entry_file
        module_name = "solbench_solution_" + Path(spec.entry_file).with_suffix("").as_posix().replace("/", "_")
        module_spec = importlib.util.spec_from_file_location(module_name, entry)
        if module_spec is None or module_spec.loader is None:
            raise BuildError(f"{spec.entry_file} cannot be imported as a Python module")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        try:
            module_spec.loader.exec_module(module)
        except SystemExit as error:
            raise BuildError(f"importing {spec.entry_file} called sys.exit({error.code})") from None
        except BaseException:  # the import runs untrusted code; any failure is the solution's
            raise BuildError(f"importing {spec.entry_file} failed:\n{traceback.format_exc(limit=8)}") from None
        function = getattr(module, spec.entry_symbol, None)
        if not callable(function):
            raise BuildError(f"{spec.entry_file} defines no function {spec.entry_symbol!r}")
        return function
