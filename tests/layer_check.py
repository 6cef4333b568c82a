"""Reading a package's imports without running it: the graph that tests/test_layers.py checks.

Every module counts (packages, submodules and the package's top-level modules), and so does every
import in it, wherever it stands (module level, inside a function, under ``if TYPE_CHECKING``):
absolute ones, relative ones (``from . import x``, ``from ..layer import y``) and string ones
(``importlib.import_module("pkg.mod")``, ``importlib.util.find_spec("pkg.mod")``, also with a
module-level string constant as the argument). A name is resolved to the most specific module of
the package it names: ``from pkg.layer import mod`` is an edge to ``pkg.layer.mod`` when that is a
module, to ``pkg.layer`` (its ``__init__``) otherwise. Importing a submodule also runs its parents'
``__init__``; those implicit edges are not counted, or every re-exporting ``__init__`` would be a
circle with its own submodules.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

STRING_IMPORTERS = {"import_module", "find_spec"}
"""Functions whose first argument is a module name: importlib.import_module, importlib.util.find_spec."""


def module_names(package_dir: Path) -> dict[str, Path]:
    """Every module of the package in `package_dir`, by dotted name (``pkg``, ``pkg.layer``, ``pkg.layer.mod``)."""
    root = package_dir.name
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = [root, *path.relative_to(package_dir).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The most specific module of the package that `name` names (``pkg.mod.function`` -> ``pkg.mod``)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _base_of_relative(module: str, path: Path, level: int, name: str | None) -> str:
    """What ``from <level dots><name> import ...`` in `module` names."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - (level - 1)] if level > 1 else package
    return ".".join([*base, *([name] if name else [])])


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments: a string import often names its module through one."""
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = node.value.value
    return constants


def _string_import(node: ast.Call, constants: dict[str, str]) -> str | None:
    function = node.func
    called = (
        function.attr
        if isinstance(function, ast.Attribute)
        else function.id
        if isinstance(function, ast.Name)
        else None
    )
    if called not in STRING_IMPORTERS or not node.args:
        return None
    argument = node.args[0]
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    if isinstance(argument, ast.Name):
        return constants.get(argument.id)
    return None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `module` (at `path`) imports, by any of the ways above."""
    tree = ast.parse(path.read_text(), filename=str(path))
    constants = _string_constants(tree)
    named: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base_of_relative(module, path, node.level, node.module) if node.level else node.module or ""
            named += [f"{base}.{alias.name}" for alias in node.names]  # resolves to `base` when not a module
        elif isinstance(node, ast.Call):
            text = _string_import(node, constants)
            if text and not text.startswith("."):
                named.append(text)
    found = {_resolve(name, modules) for name in named}
    return {target for target in found if target is not None and target != module}


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    modules = module_names(package_dir)
    return {module: imports_of(module, path, modules) for module, path in modules.items()}


def layer_of(module: str, layers: list[tuple[str, ...]]) -> int | None:
    """The index of the row of `layers` that names `module`'s package (``pkg.layer.x`` -> ``layer``) or, for a
    top-level module ``pkg.name``, ``name`` (``__init__`` for the package itself). None when no row names it."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else "__init__"
    return next((index for index, row in enumerate(layers) if name in row), None)


def upward_imports(graph: dict[str, set[str]], layers: list[tuple[str, ...]]) -> list[str]:
    """``importer -> imported`` for each import of a module in a later row of `layers` (bottom row first), and
    each module that no row names: every module has a place."""
    found = []
    for module in sorted(graph):
        own = layer_of(module, layers)
        if own is None:
            found.append(f"{module} is in no layer")
            continue
        for target in sorted(graph[module]):
            other = layer_of(target, layers)
            if other is not None and other > own:
                found.append(
                    f"{module} -> {target} (layer {'/'.join(layers[own])} imports layer {'/'.join(layers[other])})"
                )
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles, each as a chain ``[a, b, ..., a]``, enough of them to name every module on one:
    in each group of modules that reach each other, the shortest circle through its first module (by name),
    then through the first module no chain has named yet, and so on. Sorted, so the report is stable."""
    found = []
    for group in _strongly_connected(graph):
        if len(group) == 1 and next(iter(group)) not in graph.get(next(iter(group)), ()):
            continue
        named: set[str] = set()
        for start in sorted(group):
            if start not in named:
                found.append(_shortest_circle(graph, start, group))
                named.update(found[-1])
    return sorted(found)


def _shortest_circle(graph: dict[str, set[str]], start: str, group: set[str]) -> list[str]:
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        for target in sorted(graph.get(current, ())):
            if target == start:
                chain = [current]
                while chain[-1] != start:
                    chain.append(previous[chain[-1]])
                return [*reversed(chain), start]
            if target in group and target not in previous:
                previous[target] = current
                queue.append(target)
    raise AssertionError(f"{start} is in a strongly connected group but on no circle")


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative (a deep import chain must not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    groups.append(group)
    return groups
