"""Recipes for the built-in suite, one module per set; each exposes ``drafts() -> list[ProblemDraft]``.

`scripts/build-suite` writes every draft under ``problems/``; a test checks the folders are current.
"""

from __future__ import annotations

import importlib

from solbench.suite.draft import ProblemDraft

SET_MODULES = (
    "l1", "l2", "quant", "fib", "dlrm", "ssm", "mla_rope",
    "vision_language", "speech", "dlrm_kaggle", "nvfp4", "fib_serving", "generation", "llm_breadth", "moe_routing", "training",
)


def all_drafts() -> list[ProblemDraft]:
    drafts: list[ProblemDraft] = []
    for module_name in SET_MODULES:
        try:
            module = importlib.import_module(f"solbench.suite.catalog.{module_name}")
        except ModuleNotFoundError as error:
            if error.name == f"solbench.suite.catalog.{module_name}":
                continue
            raise
        drafts.extend(module.drafts())
    names = [d.name for d in drafts]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"recipes: problem names used twice: {', '.join(duplicates)}")
    return drafts
