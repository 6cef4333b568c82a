"""C++ and CUDA solutions, compiled with torch.utils.cpp_extension (the `torch` binding).

The sources bind their entry function themselves (PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)),
as upstream solutions do; the entry symbol is looked up on the built module.
"""

from __future__ import annotations

import hashlib
import io
import sys
from contextlib import redirect_stdout
from pathlib import Path

from solbench.sandbox.builders.errors import BuildError
from solbench.sandbox.builders.sources import require_cuda, write_sources

COMPILED_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")
BASE_CFLAGS = ("-O3",)
"""Passed to the C++ compiler before a solution's own `compile_options.cflags`."""


class TorchExtensionBuilder:
    @staticmethod
    def handles(spec) -> bool:
        return not spec.is_python_hosted

    def build(self, solution, source_dir: Path, device: str):
        spec = solution.spec
        require_cuda(spec, device)
        paths = write_sources(solution, source_dir)
        compiled = [str(p) for p in paths if p.suffix in COMPILED_SUFFIXES]
        if not compiled:
            raise BuildError(f"no file to compile among the sources (need one of {', '.join(COMPILED_SUFFIXES)})")
        from torch.utils.cpp_extension import load

        options = spec.compile_options
        digest = hashlib.sha1("".join(s.path + s.content for s in solution.sources).encode()).hexdigest()[:12]
        build_dir = source_dir.parent / "build"
        build_dir.mkdir(exist_ok=True)
        log = io.StringIO()
        try:
            with redirect_stdout(log):
                module = load(
                    name=f"solbench_ext_{digest}",
                    sources=compiled,
                    extra_include_paths=[str(source_dir)],
                    extra_cflags=[*BASE_CFLAGS, *(options.cflags if options else [])],
                    extra_cuda_cflags=list(options.cuda_cflags) if options else [],
                    extra_ldflags=list(options.ld_flags) if options else [],
                    with_cuda=spec.needs_cuda,
                    build_directory=str(build_dir),
                    verbose=True,
                )
        except BaseException as error:  # compiler failures arrive as RuntimeError with the compiler's output
            sys.stdout.write(log.getvalue())
            raise BuildError(f"compilation failed: {str(error)[-6000:]}") from None
        sys.stdout.write(log.getvalue())
        function = getattr(module, spec.entry_symbol, None)
        if function is None:
            raise BuildError(
                f"the built extension exports no {spec.entry_symbol!r}; bind it with "
                "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(...); }"
            )
        return function
