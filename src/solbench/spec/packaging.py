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


def compiled_reference_solution(definition: Definition) -> Solution:
    """The reference under ``torch.compile``: a baseline candidate (the faster correct one is T_b)."""
    eager = reference_solution(definition)
    source = definition.reference + "\n\nimport torch as _torch\n\n_eager_run = run\nrun = _torch.compile(_eager_run)\n"
    return eager.model_copy(update={
        "name": f"{definition.name}__reference_compiled",
        "description": "The definition's reference program under torch.compile (default mode).",
        "sources": [eager.sources[0].model_copy(update={"content": source})]})
