"""Packaging a definition's reference program as a Solution (the baseline every harness should pass)."""

from __future__ import annotations

from solbench.spec.definition import Definition
from solbench.spec.solution import BuildSpec, Solution, SourceFile


def reference_solution(definition: Definition) -> Solution:
    language = "triton" if "import triton" in definition.reference else "pytorch"
    return Solution(
        name=f"{definition.name}__reference",
        definition=definition.name,
        author="reference",
        description="The definition's reference program, packaged unchanged.",
        spec=BuildSpec(languages=[language], target_hardware=["LOCAL"], entry_point="reference.py::run",
                       destination_passing_style=False),
        sources=[SourceFile(path="reference.py", content=definition.reference)],
    )
