"""Write the recipe-built problems of the suite to disk (``scripts/build-suite``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from solbench.spec.definition import tag_value
from solbench.suite.catalog import all_drafts
from solbench.suite.draft import ProblemDraft, write_problem


def _origin(folder: Path) -> str | None:
    try:
        tags = json.loads((folder / "definition.json").read_text()).get("tags", [])
    except (OSError, ValueError):
        return None
    return tag_value(tags, "origin")


def build_suite(root: Path, drafts: list[ProblemDraft] | None = None) -> list[Path]:
    """Rewrite the recipe problems under ``root``. A whole build (`drafts` None) also removes the recipe
    folders no recipe makes any more; a partial one (some modules' drafts) cannot tell those from other
    modules' folders, so it removes nothing. Folders written by `solbench extract` (``origin:extract``) are
    left alone.
    """
    whole = drafts is None
    drafts = all_drafts() if drafts is None else drafts
    written = [write_problem(draft, root) for draft in drafts]
    if whole:
        keep = {p.resolve() for p in written}
        for set_name in sorted({d.set for d in drafts}):
            _remove_stale(Path(root) / set_name, keep)
    return written


def _remove_stale(set_folder: Path, keep: set[Path]) -> None:
    for definition in sorted(set_folder.glob("*/definition.json")):
        folder = definition.parent
        if folder.resolve() not in keep and _origin(folder) == "recipe":
            shutil.rmtree(folder)
