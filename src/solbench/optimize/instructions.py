"""The contract as an agent reads it: INSTRUCTIONS.md and the templates/ beside it.

`guide_files` is what a round folder holds about writing a solution; `solbench template` prints the same
instructions, or one of the templates. Everything here is rendered from the SolutionContract and from
`solution_template`, so the text says what the checks enforce.
"""

from __future__ import annotations

import json
from typing import Any

from solbench.optimize.contract import INSTRUCTIONS_FILE, SolutionContract, solution_contract
from solbench.optimize.solution_templates import solution_template
from solbench.spec.definition import Definition
from solbench.spec.problem import Problem


def problem_guide(
    problem: Problem, device: str, precision: str = "auto", language: str | None = None, style: str = "value"
) -> str:
    """What `solbench template` prints: the instructions for `problem` over all its workloads, or with `language`
    the template solution.json in that language and `style`."""
    if language is not None:
        return template_json(solution_template(problem.definition, language, style, device))
    return instructions_text(solution_contract(problem, problem.workloads, device, precision))


def guide_files(contract: SolutionContract, definition: Definition) -> dict[str, str]:
    """Relative path -> text: INSTRUCTIONS.md and one template solution.json per language and calling style."""
    files = {INSTRUCTIONS_FILE: instructions_text(contract)}
    for template in contract.templates:
        solution = solution_template(definition, template.language, template.style, contract.device)
        files[template.file] = template_json(solution)
    return files


def template_json(solution) -> str:
    """A solution as the JSON file an agent edits: indented, without the fields left unset."""
    return json.dumps(solution.model_dump(mode="json", exclude_none=True), indent=1) + "\n"


def instructions_text(contract: SolutionContract) -> str:
    """The contract as Markdown, for an agent that reads files rather than the card."""
    sections = [
        _opening(contract),
        _entry_point(contract),
        _schema(contract),
        _languages(contract),
        _correctness(contract),
        _static_rules(contract),
        "## Testing\n\n" + "\n".join(f"- {line}" for line in contract.testing),
    ]
    return "\n\n".join(sections) + "\n"


def _opening(contract: SolutionContract) -> str:
    lines = [f"# Writing a solution of {contract.problem}", ""]
    if contract.description:
        lines += [contract.description, ""]
    lines += [
        "In a `solbench optimize` round folder, write the candidate as `solution.json` (several: "
        "`solutions/<name>.json`). Its outputs must match those of the definition's reference program "
        "(`problem/reference.py` in a round folder) on every workload, and it is timed on "
        f"`{contract.device}`. Each template below is a valid solution to start from: copy one to "
        "`solution.json` and replace the body of its entry function. A round folder holds them under "
        "`templates/`; `solbench template <problem folder> --language L --style S` prints one anywhere.",
        "",
        "| file | language | style | as written |",
        "| --- | --- | --- | --- |",
    ]
    for template in contract.templates:
        works = "passes (calls the reference)" if template.passes_as_written else "builds; raises until written"
        lines.append(f"| `{template.file}` | {template.language} | {template.style} | {works} |")
    return "\n".join(lines)


def _entry_point(contract: SolutionContract) -> str:
    lines = [
        "## The entry point",
        "",
        "`spec.entry_point` is `FILE::FUNCTION`, a function in one of `sources` (the templates use `run`). "
        "The harness calls it with the inputs, positionally, in this order:",
        "",
        "| | name | Python | C++ | dtype | shape | |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for role, described in (("input", contract.inputs), ("output", contract.outputs)):
        lines += [
            f"| {role} | `{a.name}` | `{a.python_type}` | `{a.cpp_type}` | {a.dtype} | {a.shape_text} | "
            f"{a.description or ''} |"
            for a in described
        ]
    lines += ["", "Axes, with their sizes in these workloads:", ""]
    for axis in contract.axes:
        how = f" = {axis.expression}" if axis.expression else ""
        lines.append(f"- `{axis.name}` ({axis.kind}{how}): {', '.join(str(size) for size in axis.sizes)}")
    lines += ["", "Two calling styles; `spec.destination_passing_style` picks one:"]
    for style in contract.calling_styles:
        lines += [
            "",
            f'- **{style.style}** (`"destination_passing_style": {str(style.destination_passing_style).lower()}`'
            + (", the default when the field is absent" if style.destination_passing_style else "")
            + f"): `{style.python_signature}`; in C++ `{style.cpp_signature}`",
            *(f"    - {rule}" for rule in style.rules),
        ]
    return "\n".join(lines)


def _schema(contract: SolutionContract) -> str:
    lines = [
        "## solution.json",
        "",
        "Every field (the JSON schema is the card's `contract.solution_schema`); give `spec.languages` (or the "
        "older `spec.language`):",
        "",
    ]
    for path, kind, required, description in schema_fields(contract.solution_schema):
        flag = "required" if required else "optional"
        lines.append(f"- `{path}` ({kind}, {flag})" + (f": {' '.join(description.split())}" if description else ""))
    return "\n".join(lines)


def schema_fields(schema: dict[str, Any]) -> list[tuple[str, str, bool, str]]:
    """(dotted path, type, required, description) of every field of a pydantic JSON schema, nested objects
    expanded (`sources[].path`)."""
    definitions = schema.get("$defs", {})
    rows: list[tuple[str, str, bool, str]] = []

    def walk(node: dict[str, Any], prefix: str) -> None:
        required = set(node.get("required", []))
        for name, field in node.get("properties", {}).items():
            kind, nested = _kind(field, definitions)
            default = field.get("default")
            description = field.get("description", "")
            if default not in (None, [], {}):
                description = f"{description} Default {json.dumps(default)}.".strip()
            rows.append((prefix + name, kind, name in required, description))
            if nested is not None:
                walk(nested, f"{prefix}{name}{'[]' if kind.startswith('list') else ''}.")

    walk(schema, "")
    return rows


def _kind(field: dict[str, Any], definitions: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    option = next((o for o in field.get("anyOf", [field]) if o.get("type") != "null"), field)
    if "$ref" in option:
        return "object", definitions[option["$ref"].rsplit("/", 1)[-1]]
    if option.get("type") == "array":
        items = option.get("items", {})
        if "$ref" in items:
            return "list of objects", definitions[items["$ref"].rsplit("/", 1)[-1]]
        return f"list of {items.get('type', 'values')}", None
    return str(option.get("type", "value")), None


def _languages(contract: SolutionContract) -> str:
    lines = [
        f"## Languages that run on `{contract.device}`",
        "",
        "| `spec.languages` | how it is built | template |",
        "| --- | --- | --- |",
    ]
    lines += [
        f"| `{language.language}` | {language.built} | {f'`{language.template}`' if language.template else ''} |"
        for language in contract.languages
    ]
    lines += [
        "",
        "Only what the evaluation environment has installed can be imported (`spec.dependencies` is recorded, "
        "not installed). Python-hosted and compiled languages cannot be mixed in one solution.",
    ]
    return "\n".join(lines)


def _correctness(contract: SolutionContract) -> str:
    lines = [
        "## Correctness",
        "",
        "Each output is compared with the reference's on fresh random inputs, several rounds, and the outputs of "
        "timed calls are checked again. The tolerance of each workload:",
        "",
        "| workloads | max_atol | max_rtol | required_matched_ratio | max_error_cap | allow_negative_inf |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for group in contract.tolerances:
        t = group.tolerance
        lines.append(
            f"| {', '.join(group.workloads)} | {t.max_atol:g} | {t.max_rtol:g} | {t.required_matched_ratio:g} | "
            f"{'none' if t.max_error_cap is None else f'{t.max_error_cap:g}'} | {str(t.allow_negative_inf).lower()} |"
        )
    lines += ["", "The rules, by the `failed_rule` a failing workload reports:", ""]
    lines += [f"- `{rule.rule}`: {rule.checks}" for rule in contract.correctness_rules]
    lines += ["", f"**The precision rule** (policy `{contract.precision_policy}`): {contract.precision_rule}."]
    return "\n".join(lines)


def _static_rules(contract: SolutionContract) -> str:
    lines = [
        "## What the static rules forbid",
        "",
        "The sources are checked before anything runs (`solbench check solution.json`). A `block` finding "
        "means the solution is not run and every workload is `REWARD_HACK`; a `warn` finding is left to the "
        "runtime checks.",
        "",
        "| rule | severity | why |",
        "| --- | --- | --- |",
    ]
    lines += [f"| `{rule.rule}` | {rule.severity} | {rule.why} |" for rule in contract.static_rules]
    return "\n".join(lines)
