"""One coercion for every argument that takes a baselines file's path or a loaded Baselines."""

import ast
from pathlib import Path

import pytest

import solbench
from solbench.scoring import Baseline, Baselines, ScoreError, as_baselines, save_baselines

SOURCE = Path(solbench.__file__).parent


class _PathLike:
    def __init__(self, path: Path):
        self.path = path

    def __fspath__(self) -> str:
        return str(self.path)


def test_a_path_in_any_form_is_read_and_a_loaded_value_is_kept(tmp_path):
    entry = Baseline(definition="gemm", workload="w0", hardware="H100_SXM", latency_ms=2.0)
    path = tmp_path / "baselines.json"
    save_baselines(path, [entry], "now", "test")
    for given in (path, str(path), _PathLike(path)):
        assert as_baselines(given).get("gemm", "w0", "h100_sxm") == entry
    loaded = Baselines([entry])
    assert as_baselines(loaded) is loaded and as_baselines(None) is None


def test_a_missing_file_or_another_type_is_refused(tmp_path):
    with pytest.raises(ScoreError, match="file not found"):
        as_baselines(tmp_path / "absent.json")
    with pytest.raises(TypeError, match="baselines"):
        as_baselines(3)


def test_no_other_module_tells_a_path_from_baselines_itself():
    """Telling a path from a Baselines (`isinstance(baselines, ...)`) is as_baselines's job: three copies of that
    test are how the rules drifted (one took str and Path, the others str and PathLike)."""
    found = []
    for path in SOURCE.rglob("*.py"):
        if path == SOURCE / "scoring" / "baselines.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "isinstance"
                and len(node.args) == 2
                and "baselines" in (ast.unparse(node.args[0]) + ast.unparse(node.args[1])).lower()
            ):
                found.append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    assert found == []
