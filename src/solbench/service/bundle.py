"""Download bundles: everything needed to reproduce one submission's result elsewhere, and replaying one.

A bundle is one JSON document: the solution, the problem version it was measured on (definition and
public workloads; never the held-out ones), the traces with their raw timing samples, and the
environment, hardware and harness version of the measurement. `replay_bundle` evaluates the solution
again here and compares workload by workload.
"""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from solbench.errors import SolbenchError

BUNDLE_FORMAT = "solbench-bundle/1"


class BundleError(SolbenchError):
    """A file that is not a readable solbench bundle."""


def make_bundle(submission, result, version) -> dict[str, Any]:
    """The bundle of a submission (models.Submission, its Result or None, the ProblemVersion measured on)."""
    return {
        "format": BUNDLE_FORMAT,
        "submission": {
            "id": submission.id,
            "user": submission.user.name,
            "mode": submission.mode,
            "status": submission.status,
            "created_at": submission.created_at.isoformat() + "Z",
            "code_hash": submission.code_hash,
        },
        "solution": submission.solution,
        "problem": {
            "name": version.problem.name,
            "version": version.version_hash,
            "definition": version.definition,
            "workloads": version.workloads,
        },
        "result": None
        if result is None
        else {
            "score": result.public_score if result.held_out_traces else result.score,
            "verdict": result.verdict,
            "harness_version": result.harness_version,
            "hardware": result.hardware,
            "device": result.device,
            "environment": result.environment,
            "clock": result.clock,
            "t_sol_ms": {w["uuid"]: result.t_sol_ms.get(w["uuid"]) for w in version.workloads},
            "t_b_ms": {w["uuid"]: result.t_b_ms.get(w["uuid"]) for w in version.workloads},
        },
        "traces": result.traces if result is not None else [],
    }


class BundleReplayRow(BaseModel):
    """One workload of a replayed bundle: its original and replayed status and latency."""

    model_config = ConfigDict(frozen=True)

    workload: str
    original_status: str | None
    replay_status: str
    original_ms: float | None
    replay_ms: float | None
    ratio: float | None
    """Replayed latency over the original one (1.0: the same)."""
    same_status: bool


class BundleReplay(BaseModel):
    """A submission bundle evaluated again on this machine (an optimisation run's replay is optimize.ReplayReport)."""

    model_config = ConfigDict(frozen=True)

    bundle: str
    problem: str
    problem_version: str
    original_hardware: str | None
    original_harness: str | None
    harness_version: str
    """This machine's harness version: when it differs from the original, a difference may come from it."""
    rows: list[BundleReplayRow]

    @property
    def same_statuses(self) -> bool:
        return all(row.same_status for row in self.rows)


def read_bundle(path: str | PathLike) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise BundleError(f"{path}: not a readable bundle ({error})") from None
    if not isinstance(data, dict) or data.get("format") != BUNDLE_FORMAT:
        raise BundleError(
            f"{path}: format: expected {BUNDLE_FORMAT!r} (download one from GET /api/v1/submissions/ID/bundle)"
        )
    return data


def replay_bundle(path: str | PathLike, *, config=None, workdir: str | PathLike | None = None) -> BundleReplay:
    """Evaluate the bundle's solution on its problem version here (`config`: an EvaluationConfig, default the
    library's) and compare each workload's status and latency with the bundle's traces."""
    import tempfile

    from solbench.api import evaluate
    from solbench.evaluation.result_cache import harness_version
    from solbench.spec import Definition, Problem, Solution, Trace, Workload
    from solbench.spec.validation import validate_model

    data = read_bundle(path)
    problem_data = data["problem"]
    definition = validate_model(Definition, problem_data["definition"], f"{path}: problem.definition")
    workloads = tuple(validate_model(Workload, w, f"{path}: problem.workloads") for w in problem_data["workloads"])
    solution = validate_model(Solution, data["solution"], f"{path}: solution")
    original = {t["workload"]["uuid"]: Trace.model_validate(t) for t in data.get("traces", [])}
    with tempfile.TemporaryDirectory(dir=workdir) as folder:
        problem = Problem(root=Path(folder), definition=definition, workloads=workloads)
        traces = evaluate(problem, solution, config=config)
    rows = []
    for trace in traces:
        before = original.get(trace.workload.uuid)
        before_status = before.evaluation.status.value if before and before.evaluation else None
        before_ms = (
            before.evaluation.performance.latency_ms
            if before and before.evaluation and before.evaluation.performance
            else None
        )
        after = trace.evaluation
        assert after is not None, "evaluate returns evaluated traces"
        after_ms = after.performance.latency_ms if after.performance else None
        rows.append(
            BundleReplayRow(
                workload=trace.workload.uuid,
                original_status=before_status,
                replay_status=after.status.value,
                original_ms=before_ms,
                replay_ms=after_ms,
                ratio=after_ms / before_ms if after_ms and before_ms else None,
                same_status=before_status == after.status.value,
            )
        )
    result = data.get("result") or {}
    return BundleReplay(
        bundle=str(path),
        problem=definition.name,
        problem_version=problem_data.get("version", ""),
        original_hardware=result.get("hardware"),
        original_harness=result.get("harness_version"),
        harness_version=harness_version(),
        rows=rows,
    )
