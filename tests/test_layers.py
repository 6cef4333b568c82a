"""The architecture as a test (DESIGN.md, docs/architecture.md): every module of solbench imports only from its
own layer and the layers below it, and no modules import each other in a circle.

The imports are read from the source by tests/layer_check.py: every module (top-level ones too), every import
wherever it stands (inside functions too), absolute, relative and through importlib.
"""

import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from layer_check import cycles, import_graph, on_a_circle, upward_imports

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "solbench"
LAYERS = [  # bottom row first; the modules of one row may import each other
    ("errors", "json_files", "cache_dir", "torch_threads", "version"),  # top-level modules any layer may use
    ("spec",), ("hardware",), ("sol",), ("score",), ("guard",), ("sandbox",), ("evaluate",),
    ("api", "callable_package"),  # the public API, over evaluate, score and sol; optimize and service call it
    ("suite",), ("runner",), ("optimize",), ("reach",), ("service",), ("cli",),
    ("__init__", "__main__"),  # the facade `import solbench` (it imports the API on first use), `python -m solbench`
]


@dataclass(frozen=True)
class KnownCircle:
    """A circle that is being removed: its imports are left out of both checks until it is gone."""

    issue: str
    why: str
    closing_imports: frozenset[tuple[str, str]]
    """The imports (importer, imported) that close the circle; each goes upward."""


KNOWN_CIRCLES = {
    "callable packages": KnownCircle(
        issue="'Three import circles': api <-> callable_package <-> evaluate/score",
        why="solbench.evaluate and solbench.score are made callable (callable_package.py) so that "
            "`solbench.evaluate(...)` and `solbench.score(...)` call the public API: each layer package imports "
            "the facade above it, which imports the API, which imports the layer. The packages are being renamed "
            "and callable_package.py removed; then this entry must go (test_known_circles_still_exist says when).",
        closing_imports=frozenset({("solbench.evaluate", "solbench.callable_package"),
                                   ("solbench.score", "solbench.callable_package")})),
}


@cache
def _solbench_graph() -> dict[str, frozenset[str]]:
    return {module: frozenset(targets) for module, targets in import_graph(PACKAGE).items()}


def _graph(excepted=frozenset()) -> dict[str, set[str]]:
    """solbench's imports, less the `excepted` ones."""
    return {module: {target for target in targets if (module, target) not in excepted}
            for module, targets in _solbench_graph().items()}


def _excepted() -> frozenset[tuple[str, str]]:
    return frozenset().union(*(circle.closing_imports for circle in KNOWN_CIRCLES.values()))


def test_every_module_imports_only_its_own_and_lower_layers():
    upward = upward_imports(_graph(excepted=_excepted()), LAYERS)
    assert not upward, "imports that go up a layer (or modules in no layer; see LAYERS):\n" + "\n".join(upward)


def test_no_modules_import_each_other_in_a_circle():
    found = cycles(_graph(excepted=_excepted()))
    assert not found, "import circles:\n" + "\n".join(" -> ".join(chain) for chain in found)


def test_known_circles_still_exist():
    """An allow-list entry outlives its circle only by mistake: once the circle is gone, delete the entry."""
    graph = _graph()
    for name, circle in KNOWN_CIRCLES.items():
        for importer, imported in sorted(circle.closing_imports):
            assert on_a_circle(graph, importer, imported), (
                f"the known circle {name!r} ({circle.issue}) no longer goes through {importer} -> {imported}: "
                "delete its entry in KNOWN_CIRCLES (tests/test_layers.py)")


FAKE_PACKAGE = {  # a package whose lower layer reaches up in the ways an AST walk of absolute imports misses
    "__init__.py": "",
    "low/__init__.py": "",
    "low/base.py": "def reach_up():\n    from ..high import top  # relative, inside a function\n",
    "low/loader.py": "import importlib.util\n\nif importlib.util.find_spec('fake.high') is None:\n    pass\n",
    "low/named.py": "import importlib\n\nMODULE = 'fake.high.top'\n\n\ndef load():\n"
                    "    return importlib.import_module(MODULE)\n",
    "high/__init__.py": "",
    "high/top.py": "from . import helpers\nfrom importlib import import_module\n\n"
                   "base = import_module('fake.low.base')\n",
    "high/helpers.py": "",
    "loose.py": "",
}


def test_the_check_reads_relative_and_importlib_imports(tmp_path):
    for name, text in FAKE_PACKAGE.items():
        (tmp_path / "fake" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "fake" / name).write_text(text)
    graph = import_graph(tmp_path / "fake")
    assert graph["fake.high.top"] == {"fake.high.helpers", "fake.low.base"}
    assert upward_imports(graph, [("low",), ("high",), ("__init__",)]) == [
        "fake.loose is in no layer",
        "fake.low.base -> fake.high.top (layer low imports layer high)",
        "fake.low.loader -> fake.high (layer low imports layer high)",
        "fake.low.named -> fake.high.top (layer low imports layer high)",
    ]
    assert cycles(graph) == [["fake.high.top", "fake.low.base", "fake.high.top"]]


def test_importing_solbench_does_not_import_torch():
    code = "import sys, solbench, solbench.spec, solbench.evaluate, solbench.sandbox; assert 'torch' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
