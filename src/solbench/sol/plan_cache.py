"""Where a problem's first workload started recording, kept in the cache folder for the next process.

The ways to record a workload are tried cheapest first (sol/analysis.py). For a reference whose work depends on
values, the fake-tensor attempt fails after constructing `FakeTensorMode`, which imports torch._dynamo: about a
second of a fresh process's first analysis, paid only to learn what the last process already learnt. The stage
the first workload succeeded at, and the reason text the ways before it gave, are what a later process needs to
start there and report the same `execution`. The key holds what decides them: the definition, the first
workload, the draws, whether routed loops use templates, the analyser's code and torch's version. A record that
cannot be read is ignored (the stages are tried again); one that cannot be written costs the same, nothing else.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from solbench.cache_records import read_record, record_key, write_record
from solbench.spec.problem import Problem

CACHE_FORMAT = 1
CACHE_FOLDER = "recording-plan"


class FirstWorkloadPlan(BaseModel):
    """The stage a problem's first workload recorded at (analysis.py's META … REAL) and why earlier ones failed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stage: int
    reason: str


@functools.cache
def _code_identity() -> dict[str, str]:
    """The analyser's sources (every module of solbench.sol: which stage succeeds depends on the recorder, the
    hybrid values and the slices alike) and torch's version, read once per process."""
    import torch

    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return {"source": digest.hexdigest()[:16], "torch": torch.__version__}


def _key(problem: Problem, draws: int, loop_templates: bool) -> str:
    material = {
        "format": CACHE_FORMAT,
        **_code_identity(),
        "definition": problem.definition.model_dump(mode="json"),
        "first_workload": problem.workloads[0].model_dump(mode="json"),
        "draws": draws,
        "loop_templates": loop_templates,
    }
    return record_key(material)


def load_plan(problem: Problem, draws: int, loop_templates: bool) -> FirstWorkloadPlan | None:
    if not problem.workloads:
        return None
    return read_record(FirstWorkloadPlan, CACHE_FOLDER, _key(problem, draws, loop_templates))


def store_plan(problem: Problem, draws: int, loop_templates: bool, plan: FirstWorkloadPlan) -> None:
    write_record(CACHE_FOLDER, _key(problem, draws, loop_templates), plan)
