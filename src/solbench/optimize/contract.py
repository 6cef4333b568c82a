"""The solution contract: what a solution of one problem must be, in the problem's own names.

The problem card carries it (`ProblemCard.contract`); every round folder renders it as INSTRUCTIONS.md
beside a template per language and calling style (instructions.py, solution_templates.py); `solbench
template` prints both, and the MCP server serves them. Each fact is read from the code that enforces it
(the Solution schema, the builders' flags, the static rules, the correctness limits), so what an agent is
told cannot drift from what it is held to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from solbench.evaluation import correctness
from solbench.guard.rules import RULES
from solbench.sandbox.builders.torch_extension import BASE_CFLAGS
from solbench.spec.definition import ConstAxis, Definition, ExprAxis, TensorSpec
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.problem import Problem
from solbench.spec.solution import CUDA_LANGUAGES, PYTHON_LANGUAGES, Language, Solution
from solbench.spec.workload import Tolerance, Workload

Style = Literal["value", "dps"]
STYLES: tuple[Style, ...] = ("value", "dps")
"""Every problem allows both calling styles; `spec.destination_passing_style` picks one."""
TEMPLATE_LANGUAGES = {
    Language.PYTORCH: "pytorch",
    Language.TRITON: "triton",
    Language.CPP: "cpp",
    Language.CUDA_CPP: "cuda",
}
"""The languages a template is written for, by the name `solbench template --language` takes."""
ENTRY_FUNCTION = "run"
"""The templates' entry function (any name works: `spec.entry_point` names it)."""
INPUTS_READ_ONLY = "the inputs are read-only: a call that writes into one is REWARD_HACK"
TEMPLATES_DIR = "templates"
INSTRUCTIONS_FILE = "INSTRUCTIONS.md"


class _Contract(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class EntryArgument(_Contract):
    """One argument of the entry point: an input, or (destination-passing style) an output buffer."""

    name: str
    dtype: str
    shape: list[str | int] | None
    """Axis names or sizes, as in the definition; None for a scalar, passed as a plain Python number."""
    python_type: str
    cpp_type: str
    """What a compiled (C++/CUDA) entry point declares it as; pybind converts."""
    description: str | None = None

    @property
    def shape_text(self) -> str:
        return "scalar" if self.shape is None else "[" + ", ".join(str(size) for size in self.shape) + "]"


class AxisSize(_Contract):
    name: str
    kind: Literal["const", "var", "expr"]
    sizes: list[int]
    """Its sizes over the workloads the contract was written for, smallest first."""
    expression: str | None = None


class CallingStyle(_Contract):
    style: Style
    destination_passing_style: bool
    """The `spec.destination_passing_style` that selects this style."""
    python_signature: str
    cpp_signature: str
    rules: list[str]
    """What the harness passes and what it reads back."""


class LanguageBuild(_Contract):
    language: str
    """The name to put in `spec.languages`."""
    built: str
    """How the harness turns the sources into the entry function."""
    template: str | None
    """The `--language` of its template, or None where no template is written."""


class ToleranceGroup(_Contract):
    tolerance: Tolerance
    workloads: list[str]


class CorrectnessRule(_Contract):
    rule: str
    """The `failed_rule` a failing workload reports."""
    checks: str


class StaticRule(_Contract):
    rule: str
    severity: str
    """block: the solution is not run and every workload is REWARD_HACK; warn: runtime checks decide."""
    why: str


class TemplateFile(_Contract):
    language: str
    style: Style
    file: str
    """Where a round folder holds it."""
    command: str
    passes_as_written: bool
    """True: it calls the reference, so it passes as it is; false (compiled languages): it builds, and raises
    until its body is written."""


class SolutionContract(_Contract):
    """How to write a solution of one problem that the harness builds, calls and accepts."""

    problem: str
    """What a solution's `definition` field must say."""
    description: str | None
    """The problem's own words about what it computes."""
    device: str
    """Where candidates run."""
    inputs: list[EntryArgument]
    """Passed positionally, in this order, in both calling styles."""
    outputs: list[EntryArgument]
    axes: list[AxisSize]
    calling_styles: list[CallingStyle]
    languages: list[LanguageBuild]
    """The languages that can run on this device."""
    solution_schema: dict[str, Any]
    """The JSON schema of solution.json (`Solution.model_json_schema()`)."""
    tolerances: list[ToleranceGroup]
    correctness_rules: list[CorrectnessRule]
    """Every output is held to these, beyond its tolerance."""
    precision_policy: Literal["strict", "tolerance"]
    precision_rule: str
    static_rules: list[StaticRule]
    """Checked before anything runs."""
    testing: list[str]
    templates: list[TemplateFile]


def solution_contract(
    problem: Problem, workloads: Sequence[Workload], device: str, precision: str = "auto"
) -> SolutionContract:
    """The contract of `problem` on `device`, its sizes and tolerances read from `workloads` (an agent's public
    ones); `precision` is the evaluation's policy (auto, strict, tolerance)."""
    from solbench.sol.precision import resolve_policy  # imports torch, which `import solbench.optimize` must not

    definition = problem.definition
    languages = usable_languages(device)
    policy = resolve_policy(problem, precision)
    return SolutionContract(
        problem=definition.name,
        description=definition.description,
        device=device,
        inputs=arguments(definition.inputs),
        outputs=arguments(definition.outputs),
        axes=_axes(problem, workloads),
        calling_styles=[calling_style(definition, style) for style in STYLES],
        languages=[_build(language) for language in languages],
        solution_schema=Solution.model_json_schema(),
        tolerances=_tolerances(workloads),
        correctness_rules=[CorrectnessRule(rule=rule, checks=checks) for rule, checks in _correctness_rules()],
        precision_policy="tolerance" if policy == "tolerance" else "strict",
        precision_rule=_precision_rule(policy),
        static_rules=[StaticRule(rule=r.id, severity=r.severity.value, why=r.explanation) for r in RULES.values()],
        testing=_testing(),
        templates=[
            TemplateFile(
                language=TEMPLATE_LANGUAGES[language],
                style=style,
                file=template_path(TEMPLATE_LANGUAGES[language], style),
                command=f"solbench template <problem folder> --language {TEMPLATE_LANGUAGES[language]} "
                f"--style {style} -o solution.json",
                passes_as_written=language in PYTHON_LANGUAGES,
            )
            for language in languages
            if language in TEMPLATE_LANGUAGES
            for style in STYLES
        ],
    )


def usable_languages(device: str) -> list[Language]:
    """Every language on CUDA; on a CPU the ones that need no CUDA device (Triton runs by its interpreter)."""
    return [language for language in Language if device.startswith("cuda") or language not in CUDA_LANGUAGES]


def template_path(language: str, style: str) -> str:
    return f"{TEMPLATES_DIR}/{language}-{style}.json"


def calling_style(definition: Definition, style: Style) -> CallingStyle:
    inputs, outputs = arguments(definition.inputs), arguments(definition.outputs)
    names = ", ".join(a.name for a in inputs)
    typed = [f"{a.cpp_type} {a.name}" for a in inputs]
    buffers = [f"torch::Tensor {a.name}" for a in outputs]
    if style == "dps":
        return CallingStyle(
            style="dps",
            destination_passing_style=True,
            python_signature=f"{ENTRY_FUNCTION}({', '.join(a.name for a in [*inputs, *outputs])}) -> None",
            cpp_signature=f"void {ENTRY_FUNCTION}({', '.join([*typed, *buffers])})",
            rules=[
                "the inputs, then one preallocated buffer per output, in the order above",
                INPUTS_READ_ONLY,
                "write every element of each output buffer in place (they arrive filled with NaN, the integer "
                "minimum or True, values no correct kernel leaves behind); what the call returns is ignored",
                "the buffers are contiguous, on the evaluation's device, with the output's exact shape and dtype",
            ],
        )
    returned = outputs[0].name if len(outputs) == 1 else f"({', '.join(a.name for a in outputs)})"
    cpp_result = "torch::Tensor" if len(outputs) == 1 else "std::vector<torch::Tensor>"
    return CallingStyle(
        style="value",
        destination_passing_style=False,
        python_signature=f"{ENTRY_FUNCTION}({names}) -> {returned}",
        cpp_signature=f"{cpp_result} {ENTRY_FUNCTION}({', '.join(typed)})",
        rules=[
            "the inputs, in the order above",
            INPUTS_READ_ONLY,
            "return one tensor"
            if len(outputs) == 1
            else "return a tuple or list with one tensor per output in the order above, or a dict keyed by output name",
            "each a plain torch.Tensor (no subclass) of the output's exact shape and dtype on the evaluation's "
            "device; a view of an input is copied inside the timed region",
        ],
    )


def arguments(tensors: dict[str, TensorSpec]) -> list[EntryArgument]:
    return [argument(name, spec) for name, spec in tensors.items()]


def argument(name: str, spec: TensorSpec) -> EntryArgument:
    kind = lookup_dtype(spec.dtype).kind
    if spec.is_scalar:
        python_type, cpp_type = {"float": ("float", "double"), "int": ("int", "int64_t")}.get(kind, ("bool", "bool"))
    else:
        python_type, cpp_type = "torch.Tensor", "torch::Tensor"
    return EntryArgument(
        name=name,
        dtype=spec.dtype,
        shape=spec.shape,
        python_type=python_type,
        cpp_type=cpp_type,
        description=spec.description,
    )


def _axes(problem: Problem, workloads: Sequence[Workload]) -> list[AxisSize]:
    resolved = [problem.axes_of(workload) for workload in workloads]
    return [
        AxisSize(
            name=name,
            kind="const" if isinstance(axis, ConstAxis) else "expr" if isinstance(axis, ExprAxis) else "var",
            sizes=sorted({sizes[name] for sizes in resolved}),
            expression=axis.expression if isinstance(axis, ExprAxis) else None,
        )
        for name, axis in problem.definition.axes.items()
    ]


def _tolerances(workloads: Sequence[Workload]) -> list[ToleranceGroup]:
    groups: dict[str, tuple[Tolerance, list[str]]] = {}
    for workload in workloads:
        tolerance = workload.effective_tolerance
        groups.setdefault(tolerance.model_dump_json(), (tolerance, []))[1].append(workload.uuid)
    return [ToleranceGroup(tolerance=tolerance, workloads=uuids) for tolerance, uuids in groups.values()]


def _build(language: Language) -> LanguageBuild:
    if language in PYTHON_LANGUAGES:
        built = "the entry file is imported as a Python module and the entry function taken from it"
        if language == Language.TRITON:
            built += "; @triton.jit kernels compile for the GPU, or on a CPU run in Triton's interpreter (fp32/fp16)"
    else:
        built = (
            "compiled with torch.utils.cpp_extension.load (binding `torch`): the C++ compiler gets "
            f"{' '.join(BASE_CFLAGS)} then compile_options.cflags"
            + (", nvcc gets compile_options.cuda_cflags" if language in CUDA_LANGUAGES else "")
            + ", the linker compile_options.ld_flags. The sources bind the entry function themselves: "
            f'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{ m.def("{ENTRY_FUNCTION}", &{ENTRY_FUNCTION}); }}'
        )
    if language in CUDA_LANGUAGES:
        built += " (needs a CUDA device)"
    return LanguageBuild(language=language.value, built=built, template=TEMPLATE_LANGUAGES.get(language))


def _correctness_rules() -> list[tuple[str, str]]:
    """The limits come from evaluation/correctness.py, which applies them."""
    return [
        ("shape", "exact shape"),
        ("dtype", "exact dtype"),
        ("device", "on the device the evaluation runs on"),
        ("nan", "no NaN"),
        ("inf", "no infinity, unless the reference has -inf there and the tolerance allows negative infinity"),
        ("tolerance", "the share of elements with |out - ref| <= atol + rtol * |ref| reaches required_matched_ratio"),
        ("error_cap", "max |out - ref| <= max_error_cap, when the tolerance sets one"),
        ("zero_output", "not all zeros where the reference is not"),
        ("constant_output", "not constant where the reference varies"),
        ("relative_error_norm", f"||out - ref|| / ||ref|| <= max({correctness.RELATIVE_NORM_FLOOR:g}, 2 * max_rtol)"),
        ("precision_downgrade", "see the precision rule"),
    ]


def _precision_rule(policy: str) -> str:
    strict = (
        f"each floating output must be within max({correctness.PRECISION_FACTOR:g} x the reference's error, "
        f"{correctness.PRECISION_FLOOR_ROUNDOFFS:g} unit roundoffs of its dtype) of a float64 golden result, "
        "measured as ||out - golden|| / ||golden||, on every call checked"
    )
    if policy == "tolerance":
        return (
            f"{strict}, or within {correctness.ADMITTED_FACTOR:g} x the error of the reference computed "
            "with its matrix products at the lowest precision (bf16, fp16, tf32) the workload's tolerance admits: "
            "matrix work at that precision passes, lower precision does not (each trace's "
            "evaluation.solbench.precision says which precision was admitted)"
        )
    return (
        f"fp32 means fp32-accurate: {strict}. fp32 work done in bf16, fp16 or TF32 fails, whatever the "
        "tolerance would admit"
    )


def _testing() -> list[str]:
    return [
        "inside a `solbench optimize` round folder: `solbench test solution.json` checks correctness on the "
        "smallest public workloads (exit 0 passed, 1 failed, 2 bad input); it counts against the test budget",
        "from Python `env.test(solution)`; over MCP the `test` tool: the same check",
        "`solbench check solution.json` runs the static rules alone, anywhere, for free",
        "`solbench eval <problem folder> --solution solution.json` evaluates every workload of a problem folder",
    ]
