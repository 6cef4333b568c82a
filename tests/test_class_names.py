"""Each public class name is defined in one module of solbench: two classes of one name are either one concept
written twice (keep one) or two concepts that need names saying which (SetSummary was three things)."""

import ast
from collections import defaultdict
from pathlib import Path

import solbench

SOURCE = Path(solbench.__file__).parent


def public_class_modules() -> dict[str, set[str]]:
    """Public class name (not starting with "_") -> the modules that define one, nested classes included."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found[node.name].add(str(path.relative_to(SOURCE)))
    return found


def test_no_public_class_name_is_defined_in_two_modules():
    twice = {name: sorted(modules) for name, modules in public_class_modules().items() if len(modules) > 1}
    assert twice == {}, "\n".join(f"{name}: {', '.join(modules)}" for name, modules in sorted(twice.items()))


def test_the_walk_sees_every_layer():
    names = public_class_modules()
    assert {"HardwareSpec", "ScoreReport", "RunSummary", "ServiceSettings"} <= set(names)
