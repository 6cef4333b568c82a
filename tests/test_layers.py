"""The architecture as a test (DESIGN.md, docs/architecture.md): every module of solbench imports only from its
own layer and the layers below it, and no modules import each other in a circle.

The imports are read from the source by tests/layer_check.py: every module (top-level ones too), every import
wherever it stands (inside functions too), absolute, relative and through importlib.
"""

import subprocess
import sys
from functools import cache
from pathlib import Path

from layer_check import cycles, import_graph, upward_imports

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "solbench"
LAYERS = [  # bottom row first; the modules of one row may import each other
    ("errors", "json_files", "atomic_files", "cache_dir", "cache_records", "torch_threads", "version"),  # top-level
    ("spec",),
    ("hardware",),
    ("sol",),
    ("scoring",),
    ("guard",),
    ("sandbox",),
    ("evaluation",),
    ("suite",),
    ("runner",),
    ("api",),  # the public API, over runner, evaluation, scoring and sol; optimize and service call it
    ("optimize",),
    ("reach",),
    ("service",),
    ("cli",),
    ("__init__", "__main__"),  # the facade `import solbench` (it imports the API on first use), `python -m solbench`
]


@cache
def _solbench_graph() -> dict[str, frozenset[str]]:
    return {module: frozenset(targets) for module, targets in import_graph(PACKAGE).items()}


def test_every_module_imports_only_its_own_and_lower_layers():
    upward = upward_imports(_solbench_graph(), LAYERS)
    assert not upward, "imports that go up a layer (or modules in no layer; see LAYERS):\n" + "\n".join(upward)


def test_no_modules_import_each_other_in_a_circle():
    found = cycles(_solbench_graph())
    assert not found, "import circles:\n" + "\n".join(" -> ".join(chain) for chain in found)


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
    code = (
        "import sys, solbench, solbench.spec, solbench.evaluation, solbench.sandbox; assert 'torch' not in sys.modules"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
