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


def compiled_reference_solution(definition: Definition, mode: str | None = None) -> Solution:
    """The reference under ``torch.compile`` (in `mode`, default when None): a baseline candidate (the faster
    correct one is T_b)."""
    eager = reference_solution(definition)
    arguments = f"_eager_run, mode={mode!r}" if mode else "_eager_run"
    source = definition.reference + f"\n\nimport torch as _torch\n\n_eager_run = run\nrun = _torch.compile({arguments})\n"
    suffix = f"_{mode.replace('-', '_')}" if mode else ""
    return eager.model_copy(update={
        "name": f"{definition.name}__reference_compiled{suffix}",
        "description": f"The definition's reference program under torch.compile ({mode or 'default'} mode).",
        "sources": [eager.sources[0].model_copy(update={"content": source})]})
