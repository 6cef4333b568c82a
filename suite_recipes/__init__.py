"""Recipes for the generated problems of the built-in suite, one module per family group; each exposes
``drafts() -> list[ProblemDraft]``.

This folder is suite tooling in the checkout, not part of the installed package: `scripts/build-suite`
writes every draft under ``problems/`` (recording the module as the folder's recipe in its provenance.json),
and a test checks the folders are current.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from solbench.suite.draft import ProblemDraft

RECIPE_MODULES = ("l1", "l2", "training", "llm_breadth", "quant", "nvfp4", "fib", "dlrm")


def drafts_by_recipe(modules: Sequence[str] | None = None) -> dict[str, list[ProblemDraft]]:
    """The drafts of each recipe module (`modules`, default every one), by module name."""
    unknown = sorted(set(modules or ()) - set(RECIPE_MODULES))
    if unknown:
        raise ValueError(f"no recipe module {', '.join(unknown)} (known: {', '.join(RECIPE_MODULES)})")
    found = {name: importlib.import_module(f"suite_recipes.{name}").drafts() for name in modules or RECIPE_MODULES}
    names = [d.name for group in found.values() for d in group]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"recipes: problem names used twice: {', '.join(duplicates)}")
    return found


def all_drafts() -> list[ProblemDraft]:
    return [d for group in drafts_by_recipe().values() for d in group]
