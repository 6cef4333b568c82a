"""suite.reference_file: every problem's reference as a real .py file, kept equal to its definition's."""

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from solbench.cli.app import app
from solbench.spec.errors import SpecError
from solbench.suite.reference_file import REFERENCE_FILE, reference_mismatch, sync_reference

SUITE = Path(__file__).resolve().parents[2] / "problems"


def test_every_suite_problem_has_its_reference_as_a_python_file_equal_to_the_definitions():
    folders = sorted(p.parent for p in SUITE.glob("*/*/definition.json"))
    missing = [f.name for f in folders if not (f / REFERENCE_FILE).is_file()]
    assert not missing, missing
    drifted = [f.name for f in folders if reference_mismatch(f)]
    assert not drifted, drifted
    compile((folders[0] / REFERENCE_FILE).read_text(), str(folders[0] / REFERENCE_FILE), "exec")


def test_an_edited_reference_file_is_caught_and_synced_into_the_definition(tmp_path):
    folder = tmp_path / "p"
    shutil.copytree(SUITE / "L1" / "llama-3-1-8b_rope_d128", folder)
    edited = (folder / REFERENCE_FILE).read_text() + "\n# a comment added by hand\n"
    (folder / REFERENCE_FILE).write_text(edited)
    assert "sync-references" in reference_mismatch(folder)
    result = CliRunner().invoke(app, ["suite", "sync-references", str(tmp_path)])
    assert result.exit_code == 0 and "1 of 1 definitions" in result.output
    assert json.loads((folder / "definition.json").read_text())["reference"] == edited
    assert reference_mismatch(folder) is None and not sync_reference(folder)


def test_a_folder_without_the_file_says_so(tmp_path):
    with pytest.raises(SpecError, match="no reference.py"):
        sync_reference(tmp_path)
