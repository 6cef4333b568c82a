"""Template solutions: a valid starting point per language and calling style, in the problem's own names.

The Python-hosted templates are correct as written: the entry function calls the problem's reference program,
shipped beside it as reference.py (its CPU-runnable form on a CPU, as `builtin:reference` packages it), so an
agent starts from a candidate that passes and replaces a body that works. The Triton one writes the result
with a Triton kernel, to show a launch. A compiled kernel cannot be derived from a Python reference: the C++
and CUDA templates build and bind an entry function of the right signature whose body raises until written.
"""

from __future__ import annotations

import textwrap

from solbench.optimize.contract import (
    ENTRY_FUNCTION,
    STYLES,
    TEMPLATE_LANGUAGES,
    CallingStyle,
    EntryArgument,
    arguments,
    calling_style,
)
from solbench.optimize.errors import UnknownTemplate
from solbench.spec.definition import Definition
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.packaging import reference_solution
from solbench.spec.solution import BuildSpec, CompileOptions, Language, Solution, SourceFile, normalize_language

ENTRY_FILES = {
    Language.PYTORCH: "kernel.py",
    Language.TRITON: "kernel.py",
    Language.CPP: "kernel.cpp",
    Language.CUDA_CPP: "kernel.cu",
}
NATIVE = (Language.CPP, Language.CUDA_CPP)
TRITON_BLOCK = 1024
NOTE_WIDTH = 100


def solution_template(definition: Definition, language: str, style: str, device: str) -> Solution:
    """The template of `definition` in `language` (pytorch, triton, cpp, cuda; older names too) and `style`
    (value or dps), for candidates run on `device`. Raises UnknownTemplate naming the choices."""
    chosen = template_language(language)
    if style not in STYLES:
        raise UnknownTemplate("style", style, STYLES)
    convention = calling_style(definition, "dps" if style == "dps" else "value")
    entry = ENTRY_FILES[chosen]
    name = TEMPLATE_LANGUAGES[chosen]
    header = _header(definition, chosen, convention)
    if chosen in NATIVE:
        sources = [SourceFile(path=entry, content=_native_source(definition, chosen, convention, header))]
        languages, dependencies, options = [chosen.value], ["torch"], CompileOptions()
    else:
        reference = reference_solution(definition, device)
        write = _pytorch_source if chosen == Language.PYTORCH else _triton_source
        sources = [SourceFile(path=entry, content=write(definition, convention, header)), *reference.sources]
        # a reference that launches Triton needs its interpreter on a CPU, which the language turns on
        languages = [chosen.value]
        if chosen != Language.TRITON and Language.TRITON in reference.spec.normalized_languages:
            languages.append(Language.TRITON.value)
        dependencies, options = (["torch", "triton"] if Language.TRITON.value in languages else ["torch"]), None
    works = "builds, and raises until its body is written" if chosen in NATIVE else "passes as written"
    return Solution(
        name=f"{definition.name}_{name}_{style}_template",
        definition=definition.name,
        author="solbench template",
        description=f"Template ({name}, {style} style): {works}. Replace the body of {entry} with your kernel.",
        spec=BuildSpec(
            languages=languages,
            target_hardware=["LOCAL"],
            entry_point=f"{entry}::{ENTRY_FUNCTION}",
            dependencies=dependencies,
            destination_passing_style=convention.destination_passing_style,
            compile_options=options,
        ),
        sources=sources,
    )


def template_language(name: str) -> Language:
    """The language `name` names, if a template is written for it."""
    choices = tuple(TEMPLATE_LANGUAGES.values())
    try:
        language = normalize_language(name)
    except ValueError:
        raise UnknownTemplate("language", name, choices) from None
    if language not in TEMPLATE_LANGUAGES:
        raise UnknownTemplate("language", name, choices)
    return language


def _header(definition: Definition, language: Language, convention: CallingStyle) -> list[str]:
    """The lines every template opens with: the style, the call, and each argument's type, dtype and shape."""
    dps = convention.destination_passing_style
    native = language in NATIVE
    style = (
        'destination-passing style ("destination_passing_style": true)'
        if dps
        else 'value-returning style ("destination_passing_style": false)'
    )
    return [
        f"A {TEMPLATE_LANGUAGES[language]} solution of {definition.name}, {style}.",
        "",
        f"The harness calls {convention.cpp_signature if native else convention.python_signature} with",
        *_rows(arguments(definition.inputs), native),
        "and the output buffers, each to be written in full (they arrive filled with NaN, the integer minimum or True):"
        if dps
        else "and reads back",
        *_rows(arguments(definition.outputs), native),
        "Every tensor is on the evaluation's device; the inputs must not be written.",
    ]


def _rows(described: list[EntryArgument], native: bool) -> list[str]:
    return [
        f"    {a.name}: {a.cpp_type if native else a.python_type}, {a.dtype} {a.shape_text}"
        + (f" ({a.description})" if a.description else "")
        for a in described
    ]


def _docstring(header: list[str], note: str) -> str:
    """The module docstring, its text kept exactly: a definition's descriptions may hold backslashes (a Windows
    path, `\\N`) or triple quotes, which would break or end the literal unescaped."""
    text = "\n".join([*header, "", textwrap.fill(note, NOTE_WIDTH)])
    return '"""' + text.replace("\\", "\\\\").replace('"""', '""\\"') + '\n"""\n'


def _python_parameters(definition: Definition, dps: bool) -> str:
    typed = [f"{a.name}: {a.python_type}" for a in arguments(definition.inputs)]
    return ", ".join([*typed, *(f"{name}: torch.Tensor" for name in (definition.outputs if dps else ()))])


def _python_return(definition: Definition, dps: bool) -> str:
    if dps:
        return "None"
    return "torch.Tensor" if len(definition.outputs) == 1 else "tuple[torch.Tensor, ...]"


def _reference_call(definition: Definition) -> str:
    return f"reference_run({', '.join(definition.inputs)})"


def _results_as_list(definition: Definition) -> list[str]:
    """Lines that bind `results` to the reference's outputs as a list, whichever of its forms it returns."""
    return [
        f"    results = {_reference_call(definition)}",
        "    if isinstance(results, dict):  # the reference may return its outputs by name",
        f"        results = [results[name] for name in {tuple(definition.outputs)!r}]",
        "    elif isinstance(results, torch.Tensor):  # one output, returned bare rather than in a tuple",
        "        results = [results]",
    ]


def _pytorch_source(definition: Definition, convention: CallingStyle, header: list[str]) -> str:
    dps = convention.destination_passing_style
    note = (
        "As written it calls the problem's reference program (reference.py beside it): correct, and as fast as the "
        "reference. Replace the body with your kernel; drop reference.py once nothing imports it."
    )
    lines = [
        _docstring(header, note),
        "import torch",
        "",
        "from reference import run as reference_run",
        "",
        "",
        f"def {ENTRY_FUNCTION}({_python_parameters(definition, dps)}) -> {_python_return(definition, dps)}:",
    ]
    if not dps:
        lines.append(f"    return {_reference_call(definition)}")
    else:
        lines += [
            *_results_as_list(definition),
            f"    for buffer, value in zip({_tuple(definition.outputs)}, results):",
            "        buffer.copy_(value)",
        ]
    return "\n".join(lines) + "\n"


def _triton_source(definition: Definition, convention: CallingStyle, header: list[str]) -> str:
    dps = convention.destination_passing_style
    note = (
        "As written it computes the outputs with the problem's reference program (reference.py beside it) and "
        "writes them with a Triton kernel that only copies: correct, and slower than the reference. Replace both "
        "with a kernel that computes. On a CPU, Triton runs in its interpreter (fp32 and fp16)."
    )
    lines = [
        _docstring(header, note),
        "import torch",
        "import triton",
        "import triton.language as tl",
        "",
        "from reference import run as reference_run",
        "",
        f"BLOCK = {TRITON_BLOCK}",
        "",
        "",
        "@triton.jit",
        "def _copy_kernel(source, destination, n, BLOCK: tl.constexpr):",
        "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
        "    inside = offsets < n",
        "    tl.store(destination + offsets, tl.load(source + offsets, mask=inside), mask=inside)",
        "",
        "",
        "def _write(value: torch.Tensor, buffer: torch.Tensor) -> None:",
        '    """buffer[...] = value, by one launch of a Triton kernel over the flattened, contiguous buffer."""',
        "    source = value.to(buffer.dtype).contiguous()",
        "    n = buffer.numel()",
        "    if n:",
        "        _copy_kernel[(triton.cdiv(n, BLOCK),)](source, buffer, n, BLOCK=BLOCK)",
        "",
        "",
        f"def {ENTRY_FUNCTION}({_python_parameters(definition, dps)}) -> {_python_return(definition, dps)}:",
        *_results_as_list(definition),
    ]
    if dps:
        lines += [
            f"    for buffer, value in zip({_tuple(definition.outputs)}, results):",
            "        _write(value, buffer)",
        ]
    else:
        dtypes = ", ".join(f"torch.{lookup_dtype(spec.dtype).torch_name}" for spec in definition.outputs.values())
        lines += [
            "    outputs = []",
            f"    for value, dtype in zip(results, ({dtypes},)):",
            "        buffer = torch.empty(value.shape, dtype=dtype, device=value.device)",
            "        _write(value, buffer)",
            "        outputs.append(buffer)",
            "    return outputs[0]" if len(definition.outputs) == 1 else "    return tuple(outputs)",
        ]
    return "\n".join(lines) + "\n"


def _native_source(definition: Definition, language: Language, convention: CallingStyle, header: list[str]) -> str:
    dps = convention.destination_passing_style
    outputs = list(definition.outputs)
    comment = _line_comments(header)
    comment += [
        "//",
        "// This template builds and binds the entry function; it raises until you write its body (the reference",
        "// program it must match is the problem's reference.py).",
    ]
    includes = ["#include <torch/extension.h>"]
    if language == Language.CUDA_CPP:
        includes.append("#include <ATen/cuda/CUDAContext.h>")
        comment += [
            "// Launch kernels on the current stream: kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>."
        ]
    target = ", ".join(outputs)
    body = [f'    TORCH_CHECK(false, "{ENTRY_FUNCTION}: write the kernel that computes {target}");']
    if not dps:
        body.append("    return {};")
    return "\n".join(
        [
            *comment,
            *includes,
            "",
            convention.cpp_signature + " {",
            *body,
            "}",
            "",
            f'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{ m.def("{ENTRY_FUNCTION}", &{ENTRY_FUNCTION}); }}',
            "",
        ]
    )


def _line_comments(lines: list[str]) -> list[str]:
    """`//` comments that stay comments whatever a definition's descriptions hold: each line break of a description
    starts a new comment line (else the rest of it would be C++ code), and a line ending in a backslash gets a
    closing mark (else the compiler joins the next line, an `#include` say, to the comment)."""
    comments = []
    for line in lines:
        for part in line.splitlines() or [""]:
            part = part.rstrip()
            comments.append(f"// {part}".rstrip() + (" (end)" if part.endswith("\\") else ""))
    return comments


def _tuple(names) -> str:
    """A Python tuple display of `names` (the one-element form keeps its comma)."""
    return f"({', '.join(names)}{',' if len(names) == 1 else ''})"
