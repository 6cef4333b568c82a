"""Writing a solution's sources into its private directory."""

from __future__ import annotations

from pathlib import Path


def write_sources(solution, directory: Path) -> list[Path]:
    written = []
    for source in solution.sources:
        target = (directory / source.path).resolve()
        if directory.resolve() not in target.parents:
            raise ValueError(f"source path {source.path!r} leaves the solution directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.content, encoding="utf-8")
        written.append(target)
    return written


def require_cuda(spec, device: str) -> None:
    """A CUDA language on a CPU evaluation is a build error that says what is needed."""
    from solbench.sandbox.builders.errors import BuildError

    if spec.needs_cuda and not device.startswith("cuda"):
        languages = ", ".join(language.value for language in spec.normalized_languages)
        raise BuildError(
            f"language {languages} needs a CUDA device, but this evaluation runs on {device}; "
            "run on a machine with an NVIDIA GPU (--device cuda)"
        )
