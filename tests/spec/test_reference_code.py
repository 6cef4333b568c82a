"""Importing a problem's reference: a module from a file in a folder of its own, which the caller removes."""

import sys
import tempfile
from pathlib import Path

import pytest

from solbench.spec.definition import Definition
from solbench.spec.reference_code import ReferenceImportError, import_reference


def _definition(reference: str) -> Definition:
    return Definition.model_validate(
        {
            "name": "imported",
            "axes": {"n": {"type": "var"}},
            "inputs": {"x": {"shape": ["n"], "dtype": "float32"}},
            "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
            "reference": reference,
        }
    )


def test_an_imported_reference_lives_in_a_folder_the_caller_removes():
    module, folder = import_reference(_definition("def run(x):\n    return x * 2\n"), "cpu")
    assert module.run(3) == 6 and folder.is_dir() and folder.name.startswith("solbench-reference-")


@pytest.mark.parametrize(
    "reference", ["def run(x):\n    return (:, 1)\n", "def run(x):\n    return x\n\nraise ValueError('at import')\n"]
)
def test_a_reference_that_fails_to_import_leaves_no_folder_and_no_module_behind(monkeypatch, tmp_path, reference):
    """A failed import hands the caller no folder to remove, so it removes its own (the analysis tries each
    problem's rewritten reference, and falls back to the plain one where that does not import)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    modules = set(sys.modules)
    with pytest.raises(ReferenceImportError, match="importing the reference failed"):
        # set as the analysis sets its rewritten source: past the definition's own checks
        import_reference(_definition("def run(x):\n    return x\n").model_copy(update={"reference": reference}), "cpu")
    assert list(Path(tmp_path).iterdir()) == []
    assert not {name for name in set(sys.modules) - modules if name.startswith("solbench_reference_")}


def test_a_reference_that_exits_at_import_still_removes_its_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    exiting = "import sys\n\ndef run(x):\n    return x\n\nsys.exit(3)\n"
    with pytest.raises(SystemExit):
        import_reference(_definition("def run(x):\n    return x\n").model_copy(update={"reference": exiting}), "cpu")
    assert list(Path(tmp_path).iterdir()) == []
