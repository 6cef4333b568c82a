"""Writing an upstream problem as a solbench problem folder: ``DIR/<set>/<NNN_name>/``.

definition.json keeps upstream's field names and values and gains tags (`set:`, `origin:sol-execbench`,
and `hf:`/`model:` from `hf_id`); workload.jsonl and metadata.json are copied as the source gives them,
so the folder stays readable by upstream's own tools.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from solbench.spec.tiers import CPU_WORKLOAD_FILE
from solbench.suite.importer.sources import UpstreamProblem

SET_NAMES = {"L1": "L1", "L2": "L2", "Quant": "Quant", "FlashInfer-Bench": "FIB"}
"""Upstream subset -> solbench set: solbench's own suite calls FlashInfer-Bench ``FIB`` (problems/FIB)."""
ORIGIN_TAG = "origin:sol-execbench"
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def set_name(subset: str) -> str:
    """The solbench set of an upstream subset (a solbench set name stays itself, so an imported suite
    re-imports unchanged); an unknown subset keeps its name (made folder-safe)."""
    return SET_NAMES.get(subset) or _UNSAFE.sub("-", subset).strip("-.") or "all"


def folder_name(problem: UpstreamProblem) -> str:
    """``NNN_name``: the upstream index kept in front (names already start with it upstream)."""
    name = _UNSAFE.sub("_", problem.name).strip("_.") or "problem"
    return name if re.match(rf"^0*{problem.index}_", name) else f"{problem.index:03d}_{name}"


def imported_tags(problem: UpstreamProblem, set_: str) -> list[str]:
    """The definition's own tags, then set, origin and model tags it lacks (re-importing adds nothing)."""
    tags = [t for t in problem.definition.get("tags") or [] if isinstance(t, str)]
    wanted = [f"set:{set_}", ORIGIN_TAG]
    hf_id = problem.definition.get("hf_id")
    if isinstance(hf_id, str) and hf_id:
        wanted += [f"hf:{hf_id}", f"model:{hf_id.rsplit('/', 1)[-1]}"]
    if "backward" in problem.name.lower():
        wanted.append("pass:backward")
    keys = {t.split(":", 1)[0] for t in tags}
    return tags + [t for t in wanted if t.split(":", 1)[0] not in keys]


def write_problem(problem: UpstreamProblem, folder: Path, set_: str) -> Path:
    """Write definition.json (with tags), workload.jsonl and, where the source has it, metadata.json."""
    folder.mkdir(parents=True, exist_ok=True)
    definition = {**problem.definition, "tags": imported_tags(problem, set_)}
    (folder / "definition.json").write_text(
        json.dumps(definition, indent=4, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (folder / "workload.jsonl").write_text("".join(line + "\n" for line in problem.workload_lines), encoding="utf-8")
    metadata = folder / "metadata.json"
    if problem.metadata_text is not None:
        metadata.write_text(problem.metadata_text, encoding="utf-8")
    elif metadata.exists():
        metadata.unlink()  # a stale one from an earlier import would pair other figures with these workloads
    stale_tier = folder / CPU_WORKLOAD_FILE
    if stale_tier.exists():
        stale_tier.unlink()  # derived from the earlier workloads; the import derives it again where asked
    return folder
