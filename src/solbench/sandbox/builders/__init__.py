"""Builders turn a solution's sources into a callable: one module per way of building.

Each builder has `handles(spec) -> bool` and `build(solution, source_dir, device) -> callable`
and raises BuildError with a message that becomes the COMPILE_ERROR log.
"""

from __future__ import annotations

from solbench.sandbox.builders.errors import BuildError
from solbench.sandbox.builders.python_module import PythonModuleBuilder
from solbench.sandbox.builders.torch_extension import TorchExtensionBuilder

BUILDERS = (PythonModuleBuilder, TorchExtensionBuilder)


def builder_for(spec, builders=BUILDERS):
    for builder in builders:
        if builder.handles(spec):
            return builder()
    raise BuildError(f"no builder for languages {[language.value for language in spec.normalized_languages]}")


__all__ = ["BUILDERS", "BuildError", "builder_for"]
