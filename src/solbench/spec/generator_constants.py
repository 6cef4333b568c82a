"""A custom input generator's constants that name a const axis follow that axis's size.

Upstream generators often restate the definition's constants as locals (SOL-ExecBench L1 `018`'s
``get_inputs`` writes ``max_position_embeddings = 262144`` and makes its KV caches that long). The
definition already says what the value is: a `const` axis of the same name and size. Where a CPU-tier
workload sizes that axis down (`workload.cpu.jsonl`, see docs/tiers.md), a generator that kept the literal
would still make 262,144-position caches, which neither match the workload's shapes nor fit a CPU.

`bind_generator_constants` rewrites exactly those statements: a top-level ``NAME = <int>`` in the body of
the definition's `custom_inputs_entrypoint`, where ``NAME`` is a const axis whose declared value is that
integer, becomes ``NAME = <axes argument>.get("NAME", <int>)``. The generator is called with every resolved
axis, so at the declared sizes (every published workload) the value is the same literal; only a CPU-tier
override changes it. Nothing else in the source changes (not `run`, not a literal used elsewhere), and the
problem's file is never edited: the rewrite happens where the reference is imported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from solbench.spec.definition import ConstAxis, Definition


@dataclass(frozen=True)
class BoundConstant:
    """One generator statement ``axis = value`` tied to the const axis of that name."""

    axis: str
    value: int
    line: int
    """1-based line of the literal in the reference source."""
    start: int
    end: int
    """Column span (0-based, end exclusive) of the literal on that line."""
    argument: str
    """The generator's first parameter: the dict of axes (and scalars) it is called with."""


def bound_constants(definition: Definition) -> list[BoundConstant]:
    """The generator statements that restate a const axis as a literal (empty without a custom generator)."""
    entrypoint = definition.custom_inputs_entrypoint
    if not entrypoint:
        return []
    try:
        tree = ast.parse(definition.reference)
    except SyntaxError:
        return []
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entrypoint]
    if not functions or not functions[0].args.args:
        return []
    function = functions[0]
    argument = function.args.args[0].arg
    found = []
    for statement in function.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Constant)
            and type(statement.value.value) is int
            and statement.value.lineno == statement.value.end_lineno
        ):
            continue
        name, value = statement.targets[0].id, statement.value.value
        axis = definition.axes.get(name)
        if isinstance(axis, ConstAxis) and axis.value == value and name != argument:
            end = statement.value.end_col_offset
            assert end is not None  # ast.parse sets every end position
            found.append(BoundConstant(name, value, statement.value.lineno, statement.value.col_offset, end, argument))
    return found


def bind_generator_constants(definition: Definition) -> str:
    """The reference source with each `bound_constants` literal replaced by a look-up of its axis."""
    bound = bound_constants(definition)
    if not bound:
        return definition.reference
    lines = definition.reference.splitlines(keepends=True)
    for constant in bound:
        line = lines[constant.line - 1]
        # ast's columns count UTF-8 bytes; generator lines with such literals are ASCII in practice, but be exact
        raw = line.encode("utf-8")
        lookup = f"{constant.argument}.get({constant.axis!r}, {constant.value})".encode()
        lines[constant.line - 1] = (raw[: constant.start] + lookup + raw[constant.end :]).decode("utf-8")
    return "".join(lines)
