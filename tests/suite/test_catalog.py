"""The recipes: every config value a problem cites is the published one, and the folders are current."""

import json
import math
from pathlib import Path

import pytest

from solbench.suite.build import build_suite
from solbench.suite.catalog import all_drafts

REPO = Path(__file__).resolve().parents[2]
MODEL_CONFIGS = REPO / "src" / "solbench" / "suite" / "data" / "model-configs.json"
"""Vendored with the package, so this check never skips."""


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


def test_cited_config_values_are_the_published_ones():
    records = {m["name"]: m for m in json.loads(MODEL_CONFIGS.read_text())["models"]}
    wrong = []
    for draft in all_drafts():
        record = records.get(draft.model.name)
        if record is None:
            wrong.append(f"{draft.name}: model {draft.model.name!r} is not in model-configs.json")
            continue
        if record.get("hf_id") != draft.model.hf_id or record.get("domain") != draft.model.domain:
            wrong.append(f"{draft.name}: hf_id/domain of {draft.model.name} differ from model-configs.json")
        for key, value in draft.model.config.items():
            try:
                published = _lookup(record, key)
            except KeyError:
                wrong.append(f"{draft.name}: {draft.model.name} has no published {key}")
                continue
            if not _same(published, value):
                wrong.append(f"{draft.name}: {key}={value!r}, published {published!r}")
    assert not wrong, "\n".join(wrong)


def test_problem_folders_match_the_recipes(tmp_path):
    """problems/ is generated: regenerate it and compare, so a recipe edit cannot drift from the data."""
    written = build_suite(tmp_path)
    stale = []
    for folder in written:
        committed = REPO / "problems" / folder.relative_to(tmp_path)
        for file_name in ("definition.json", "workload.jsonl", "workload.cpu.jsonl"):
            if file_name == "workload.cpu.jsonl" and not (folder / file_name).exists():
                continue
            if not (committed / file_name).exists() or \
                    (committed / file_name).read_text() != (folder / file_name).read_text():
                stale.append(str(committed.relative_to(REPO) / file_name))
    assert not stale, "run scripts/build-suite; out of date: " + ", ".join(stale[:10])
