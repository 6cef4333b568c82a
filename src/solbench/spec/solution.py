"""The Solution schema: a kernel's sources and how to build and call it."""

from __future__ import annotations

from enum import Enum
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, model_validator

PYTHON_SUFFIXES = (".py",)
NATIVE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cuh")


class Language(str, Enum):
    """Languages a solution may declare. Older files say python/cpp/cuda; see `normalize_language`."""

    PYTORCH = "pytorch"
    TRITON = "triton"
    TLX = "tlx"
    CUTE_DSL = "cute_dsl"
    CUTILE = "cutile"
    CUDNN_FRONTEND = "cudnn_frontend"
    CPP = "cpp"
    CUDA_CPP = "cuda_cpp"
    CUTLASS = "cutlass"
    CUDNN = "cudnn"
    CUBLAS = "cublas"


# Python-hosted languages run as an imported module; the others are compiled with the torch binding.
PYTHON_LANGUAGES = frozenset(
    {Language.PYTORCH, Language.TRITON, Language.TLX, Language.CUTE_DSL, Language.CUTILE, Language.CUDNN_FRONTEND}
)
CUDA_LANGUAGES = frozenset(
    {
        Language.CUDA_CPP,
        Language.CUTLASS,
        Language.CUDNN,
        Language.CUBLAS,
        Language.TLX,
        Language.CUTE_DSL,
        Language.CUTILE,
        Language.CUDNN_FRONTEND,
    }
)
_OLD_NAMES = {"python": Language.PYTORCH, "cuda": Language.CUDA_CPP}


def normalize_language(name: str) -> Language:
    try:
        return _OLD_NAMES.get(name) or Language(name)
    except ValueError:
        known = ", ".join([language.value for language in Language] + list(_OLD_NAMES))
        raise ValueError(f"unknown language {name!r} (known: {known})") from None


class _Upstream(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)


MAX_NAME_BYTES = 255
"""The longest file name Linux file systems take (NAME_MAX)."""


class SourceFile(_Upstream):
    path: str = Field(min_length=1)
    """Relative to the solution's folder, e.g. ``kernel.py``; the entry point's file is one of these."""
    content: str = Field(min_length=1)
    """The file's full text."""

    @model_validator(mode="after")
    def _relative(self) -> SourceFile:
        path = PurePosixPath(self.path)
        if path.is_absolute() or ".." in path.parts:
            raise ValueError(f"path {self.path!r} must be relative and stay inside the solution")
        if str(path) != self.path:  # "k.py/", "k.py/.", "./k.py": written as k.py, but not checked or named as it
            raise ValueError(f"path {self.path!r} must be written plainly, as {str(path)!r}")
        if "\0" in self.path:  # no file system takes it: the harness's write failed with its own paths in the error
            raise ValueError("a path may not hold a NUL character")
        if any(len(part.encode()) > MAX_NAME_BYTES for part in path.parts):
            raise ValueError(
                f"path {self.path[:80]!r}...: a file or folder name may hold at most {MAX_NAME_BYTES} bytes"
            )
        return self


class CompileOptions(_Upstream):
    cflags: list[str] = Field(default_factory=list)
    """Extra flags for the C++ compiler, after the builder's own; compiled languages only."""
    cuda_cflags: list[str] = Field(default_factory=list)
    """Extra flags for nvcc (CUDA languages)."""
    ld_flags: list[str] = Field(default_factory=list)
    """Extra linker flags, e.g. -lcublas."""


class BuildSpec(_Upstream):
    language: str | None = None
    """Older upstream form: one of python, triton, cpp, cuda."""
    languages: list[str] | None = None
    """Newer upstream form: a list such as ["pytorch"], ["triton"] or ["cuda_cpp"] (the names of `Language`)."""
    target_hardware: list[str] = Field(default_factory=lambda: ["LOCAL"])
    """Recorded, not checked."""
    entry_point: str = Field(min_length=1)
    """``file::function``: the function the harness calls, in one of the sources."""
    dependencies: list[str] = Field(default_factory=list)
    """Recorded, not installed: only what the evaluation environment has can be imported."""
    destination_passing_style: bool = True
    """True: ``run(*inputs, *outputs)`` writes into the output buffers it is given; false: ``run(*inputs)``
    returns the outputs."""
    binding: str | None = None
    """Compiled languages: only ``torch`` (the sources bind the entry with PYBIND11_MODULE)."""
    compile_options: CompileOptions | None = None
    """Compiled languages only."""

    @model_validator(mode="after")
    def _valid(self) -> BuildSpec:
        if self.entry_point.count("::") != 1:
            raise ValueError(f"entry_point: {self.entry_point!r} must be 'file::function'")
        names = self.languages if self.languages is not None else ([self.language] if self.language else [])
        if not names:
            raise ValueError("languages: at least one language is required")
        normalized = [normalize_language(n) for n in names]
        python_hosted = {language in PYTHON_LANGUAGES for language in normalized}
        if len(python_hosted) > 1:
            raise ValueError("languages: Python-hosted and compiled languages cannot be mixed")
        suffixes = PYTHON_SUFFIXES if python_hosted == {True} else NATIVE_SUFFIXES
        if not self.entry_file.endswith(suffixes):
            raise ValueError(f"entry_point: file {self.entry_file!r} must end with one of {', '.join(suffixes)}")
        if self.binding not in (None, "torch"):
            raise ValueError(f"binding: {self.binding!r} is not supported (only 'torch')")
        return self

    @property
    def normalized_languages(self) -> list[Language]:
        if self.languages is not None:
            names = self.languages
        elif self.language is not None:
            names = [self.language]
        else:  # the validator requires one; a model built without validation may lack it
            raise ValueError("languages: at least one language is required")
        return [normalize_language(n) for n in names]

    @property
    def entry_file(self) -> str:
        return self.entry_point.split("::")[0]

    @property
    def entry_symbol(self) -> str:
        return self.entry_point.split("::")[1]

    @property
    def is_python_hosted(self) -> bool:
        return all(language in PYTHON_LANGUAGES for language in self.normalized_languages)

    @property
    def needs_cuda(self) -> bool:
        return any(language in CUDA_LANGUAGES for language in self.normalized_languages)


class Solution(_Upstream):
    name: str = Field(min_length=1)
    """Any name for this candidate."""
    definition: str = Field(min_length=1)
    """The name of the problem's definition it solves."""
    author: str = Field(min_length=1)
    spec: BuildSpec
    """How to build and call it."""
    sources: list[SourceFile] = Field(min_length=1)
    description: str | None = None
    """Free text; its first line names the technique in an optimisation run's strategy memory."""

    @model_validator(mode="after")
    def _entry_present(self) -> Solution:
        paths = [s.path for s in self.sources]
        duplicates = {p for p in paths if paths.count(p) > 1}
        if duplicates:
            raise ValueError(f"sources: duplicate path {sorted(duplicates)[0]!r}")
        if self.spec.entry_file not in paths:
            raise ValueError(
                f"spec.entry_point: file {self.spec.entry_file!r} is not among sources ({', '.join(paths)})"
            )
        return self
