"""Every problem folder's provenance.json: it reads, and every config value it cites is the published one."""

import json
import math
from pathlib import Path

import pytest

from solbench.suite.errors import ProvenanceError
from solbench.suite.provenance import PROVENANCE_FILE, edited_files, read_provenance

REPO = Path(__file__).resolve().parents[2]
PROBLEMS = REPO / "problems"
MODEL_CONFIGS = REPO / "src" / "solbench" / "suite" / "data" / "model-configs.json"
"""Vendored with the package, so this check never skips."""
FOLDERS = sorted(p.parent for p in PROBLEMS.glob("*/*/definition.json"))


def _lookup(record: dict, dotted: str):
    value = record
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(dotted)
        value = value[part]
    return value


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-12)
    return a == b


def test_every_problem_folder_has_a_provenance():
    assert len(FOLDERS) > 300
    missing = [str(f.relative_to(REPO)) for f in FOLDERS if read_provenance(f) is None]
    assert not missing, f"no {PROVENANCE_FILE}: " + ", ".join(missing)


def test_cited_config_values_are_the_published_ones():
    records = {m["name"]: m for m in json.loads(MODEL_CONFIGS.read_text())["models"]}
    wrong = []
    for folder in FOLDERS:
        provenance, name = read_provenance(folder), folder.name
        record = records.get(provenance.model.name)
        if record is None:
            wrong.append(f"{name}: model {provenance.model.name!r} is not in model-configs.json")
            continue
        if record.get("hf_id") != provenance.model.hf_id or record.get("domain") != provenance.model.domain:
            wrong.append(f"{name}: hf_id/domain of {provenance.model.name} differ from model-configs.json")
        for key, value in provenance.config.items():
            try:
                published = _lookup(record, key)
            except KeyError:
                wrong.append(f"{name}: {provenance.model.name} has no published {key}")
                continue
            if not _same(published, value):
                wrong.append(f"{name}: {key}={value!r}, published {published!r}")
    assert not wrong, "\n".join(wrong)


def test_the_provenance_names_the_definition_s_model_and_cited_values():
    """The definition's tags (read by upstream tools) and provenance.json say the same."""
    differ = []
    for folder in FOLDERS:
        provenance = read_provenance(folder)
        tags = json.loads((folder / "definition.json").read_text())["tags"]
        cited = [t.split("=", 1)[0][len("config:") :] for t in tags if t.startswith("config:")]
        if f"model:{provenance.model.name}" not in tags or cited != list(provenance.config):
            differ.append(folder.name)
    assert not differ, "provenance.json and definition tags differ: " + ", ".join(differ)


def test_generated_folders_are_as_their_recipe_wrote_them():
    """A hand edit of a generated folder fails here (and the build refuses to overwrite it): edit the recipe, or
    make the folder hand-written (``"recipe": null``)."""
    edited = [
        f"{folder.relative_to(REPO)}: {', '.join(files)}"
        for folder in FOLDERS
        if (files := edited_files(folder, read_provenance(folder)))
    ]
    assert not edited, "edited since generated:\n" + "\n".join(edited)


def test_a_bad_provenance_names_the_file_and_field(tmp_path):
    (tmp_path / PROVENANCE_FILE).write_text(
        json.dumps({"model": {"name": "x", "hf_id": None, "domain": "language"}, "config": {}, "recipe": "l1"})
    )
    with pytest.raises(ProvenanceError, match=r"provenance.json: .*'generated' is given exactly when 'recipe' is"):
        read_provenance(tmp_path)
    (tmp_path / PROVENANCE_FILE).write_text("{}")
    with pytest.raises(ProvenanceError, match=r"provenance.json: model: Field required"):
        read_provenance(tmp_path)
