"""The architecture as a test: each layer imports only from the layers below it (DESIGN.md)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "solbench"
LAYERS = ["spec", "hardware", "sol", "score", "guard", "sandbox", "evaluate", "suite", "runner", "optimize", "reach",
          "service", "cli"]


def _imported_layers(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        for name in names:
            parts = name.split(".")
            if parts[0] == "solbench" and len(parts) > 1 and parts[1] in LAYERS:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", [layer for layer in LAYERS if (PACKAGE / layer).is_dir()])
def test_layer_imports_only_lower_layers(layer):
    allowed = set(LAYERS[: LAYERS.index(layer) + 1])
    for path in (PACKAGE / layer).rglob("*.py"):
        upward = _imported_layers(path) - allowed
        assert not upward, f"{path.relative_to(PACKAGE)} imports higher layer(s) {sorted(upward)}"


def test_importing_solbench_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, solbench, solbench.spec, solbench.evaluate, solbench.sandbox; assert 'torch' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
