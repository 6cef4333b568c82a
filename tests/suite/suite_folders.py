"""The suite's problem folders read back with the fields the family tests check (those a recipe's draft held).

Most problems are written by hand now (their recipes were retired; provenance.json's ``history`` names the one
that first made each); `made_by` selects the problems a recipe module generates or first made, so a family's
tests keep checking the same problems.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from solbench.spec.tiers import CPU_WORKLOAD_FILE
from solbench.suite.draft import ModelRef
from solbench.suite.provenance import Provenance, read_provenance

PROBLEMS = Path(__file__).resolve().parents[2] / "problems"
_STANDARD_TAGS = ("set:", "model:", "hf:", "domain:", "pass:", "origin:", "config:")
_FIRST_RECIPE = re.compile(r"\(module (\w+),")


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


@dataclass(frozen=True)
class FolderProblem:
    folder: Path
    definition_data: dict[str, Any]
    provenance: Provenance

    @property
    def name(self) -> str:
        return self.definition_data["name"]

    @property
    def set(self) -> str:
        return self.folder.parent.name

    @property
    def op_type(self) -> str:
        return self.definition_data["op_type"]

    @property
    def tags(self) -> list[str]:
        return self.definition_data["tags"]

    @property
    def extra_tags(self) -> list[str]:
        """The tags after the provenance ones (``family:``, ``kernel:`` ...)."""
        return [t for t in self.tags if not t.startswith(_STANDARD_TAGS)]

    @property
    def backward(self) -> bool:
        return "pass:backward" in self.tags

    @property
    def model(self) -> ModelRef:
        m = self.provenance.model
        return ModelRef(m.name, m.hf_id, m.domain, dict(self.provenance.config))

    @property
    def reference(self) -> str:
        return (self.folder / "reference.py").read_text()

    @property
    def inputs(self) -> dict[str, Any]:
        return self.definition_data["inputs"]

    @property
    def outputs(self) -> dict[str, Any]:
        return self.definition_data["outputs"]

    @property
    def axes(self) -> dict[str, Any]:
        return self.definition_data["axes"]

    @property
    def workloads(self) -> list[dict[str, int]]:
        """The GPU tier's axes (workload.jsonl)."""
        return [r["axes"] for r in _records(self.folder / "workload.jsonl")]

    @property
    def cpu_workloads(self) -> list[dict[str, int]] | None:
        return [r["axes"] for r in _records(self.folder / CPU_WORKLOAD_FILE)] or None

    def definition(self) -> dict[str, Any]:
        return self.definition_data

    def workload_records(self, tier: str = "gpu") -> list[dict[str, Any]]:
        return _records(self.folder / (CPU_WORKLOAD_FILE if tier == "cpu" else "workload.jsonl"))


@cache
def suite_problems() -> tuple[FolderProblem, ...]:
    return tuple(
        FolderProblem(p.parent, json.loads(p.read_text()), read_provenance(p.parent))
        for p in sorted(PROBLEMS.glob("*/*/definition.json"))
    )


def first_recipe(problem: FolderProblem) -> str | None:
    """The recipe module that generates the problem, or that first made it (provenance ``history``)."""
    if problem.provenance.recipe:
        return problem.provenance.recipe
    found = _FIRST_RECIPE.search(problem.provenance.history or "")
    return found.group(1) if found else None


def made_by(*modules: str) -> list[FolderProblem]:
    """The problems the recipe modules (``l2``, ``vision_language`` ...) generate or first made."""
    return [p for p in suite_problems() if first_recipe(p) in modules]


def named(name: str) -> FolderProblem:
    (found,) = [p for p in suite_problems() if p.name == name]
    return found
