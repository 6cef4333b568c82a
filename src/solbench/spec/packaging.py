"""Packaging a definition's reference program as a Solution (the baseline every harness should pass)."""

from __future__ import annotations

from pathlib import Path

from solbench.spec.cpu_reference import SOLUTION_EMULATION_MODULE, cpu_runnable_source, uses_scaled_mm
from solbench.spec.definition import Definition
from solbench.spec.solution import BuildSpec, Solution, SourceFile


def reference_solution(definition: Definition, device: str | None = None) -> Solution:
    """The reference as a solution. On the CPU (`device` ``cpu``) it is the CPU-runnable source
    (`spec.cpu_reference`): the CUDA device it names becomes the CPU, and NVFP4 `torch._scaled_mm` calls go to
    the emulation, shipped beside it as ``nvfp4_emulation.py`` and imported explicitly (torch stays unpatched,
    as the sandbox's integrity guard requires)."""
    language = "triton" if "import triton" in definition.reference else "pytorch"
    content, description = definition.reference, "The definition's reference program, packaged unchanged."
    sources = []
    if device is not None and device.startswith("cpu"):
        content = cpu_runnable_source(definition.reference, SOLUTION_EMULATION_MODULE)
        if content != definition.reference:
            description = (
                "The definition's reference program as it runs on the CPU: CUDA device names replaced"
                + (
                    ", NVFP4 torch._scaled_mm calls routed to nvfp4_emulation.scaled_mm"
                    if uses_scaled_mm(definition.reference)
                    else ""
                )
                + "."
            )
        if uses_scaled_mm(definition.reference):
            sources.append(SourceFile(path=f"{SOLUTION_EMULATION_MODULE}.py", content=emulation_source()))
    return Solution(
        name=f"{definition.name}__reference",
        definition=definition.name,
        author="reference",
        description=description,
        spec=BuildSpec(
            languages=[language],
            target_hardware=["LOCAL"],
            entry_point="reference.py::run",
            destination_passing_style=False,
        ),
        sources=[SourceFile(path="reference.py", content=content), *sources],
    )


def emulation_source() -> str:
    """The text of `spec/nvfp4.py` (torch-only), which a CPU solution ships to call NVFP4 products explicitly."""
    return (Path(__file__).parent / "nvfp4.py").read_text(encoding="utf-8")


def compiled_reference_solution(definition: Definition, mode: str | None = None, device: str | None = None) -> Solution:
    """The reference under ``torch.compile`` (in `mode`, default when None): a baseline candidate (the faster
    correct one is T_b). Packaged for `device` as `reference_solution` packages it."""
    eager = reference_solution(definition, device)
    arguments = f"_eager_run, mode={mode!r}" if mode else "_eager_run"
    main = eager.sources[0]
    source = main.content + f"\n\nimport torch as _torch\n\n_eager_run = run\nrun = _torch.compile({arguments})\n"
    suffix = f"_{mode.replace('-', '_')}" if mode else ""
    return eager.model_copy(
        update={
            "name": f"{definition.name}__reference_compiled{suffix}",
            "description": f"The definition's reference program under torch.compile ({mode or 'default'} mode).",
            "sources": [main.model_copy(update={"content": source}), *eager.sources[1:]],
        }
    )
