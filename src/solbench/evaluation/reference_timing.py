"""Reference timings (T_b) measured once per problem, workload, device and settings, and reused by later candidates.

T_b depends on the reference, the workload, the machine and how it is timed, never on the
candidate, so an optimisation loop that evaluates many candidates of one problem needs it once.
The key (`reference_timing_key`) is a sha256 over the problem's content (definition, workloads,
data files' bytes: `result_cache.problem_material`), the workload's uuid, the harness version,
the device identity (model and library versions) and every config field that decides how the
reference is timed (device, timer, flush, CPU flush mode, timing plan, rounds: the input
variants rotated). A reused summary names the key in `reused_from`.

A timing is remembered only from a workload that PASSED with the evaluator's scheduling intact
(the sandbox was stopped while the reference ran): a candidate caught changing the evaluator's
scheduling or cheating otherwise never leaves a T_b behind for others.

What is *not* reused, and why: reference outputs. Every evaluation draws a fresh secret seed for
its inputs and a fresh perturbation seed for the timed calls, so the reference's outputs for
them are new; reusing earlier outputs would need earlier inputs, which a candidate that saw
them (its own earlier evaluation) could memorise.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from solbench.atomic_files import write_whole
from solbench.evaluation.config import EvaluationConfig
from solbench.evaluation.result_cache import entry_path
from solbench.spec.problem import Problem
from solbench.spec.trace import TimingSummary
from solbench.spec.workload import Workload

_TIMING_FIELDS = ("device", "timer", "flush_cache", "cpu_flush", "rounds", "threads")


def problem_timing_key(problem: Problem, config: EvaluationConfig) -> str:
    """The part of the key every workload of one evaluation shares; hashing the problem's material (its
    data files included) is the costly step, so an evaluation computes this once."""
    from solbench.evaluation.result_cache import device_identity, harness_version, problem_material

    config = config.resolved().with_threads()
    plan = asdict(config.timing)
    plan.pop("capture", None)
    plan.pop("perturb_seed", None)
    material = {
        "problem": problem_material(problem, config.data_roots),
        "harness": harness_version(),
        "device": device_identity(config.device),
        "config": {name: getattr(config, name) for name in _TIMING_FIELDS},
        "timing": plan,
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def workload_timing_key(problem_key: str, workload: Workload) -> str:
    return hashlib.sha256(f"{problem_key}:{workload.uuid}".encode()).hexdigest()


def reference_timing_key(problem: Problem, workload: Workload, config: EvaluationConfig) -> str:
    """The key of one workload's reference timing (what decides T_b, nothing else)."""
    return workload_timing_key(problem_timing_key(problem, config), workload)


class ReferenceTimings:
    """Known reference timings, in memory and, with `folder`, on disk (one JSON file per key, written atomically).

    Pass one to `solbench.evaluate(..., reference_timings=store)` for every candidate of a problem:
    the first evaluation of each workload times the reference, later ones reuse it.
    """

    def __init__(self, folder: Path | str | None = None):
        self.folder = Path(folder) if folder is not None else None
        self._known: dict[str, TimingSummary] = {}
        self.reused = 0
        """How many workloads took their T_b from here instead of timing the reference."""

    def _path(self, key: str) -> Path:
        assert self.folder is not None, "only a store with a folder has paths"
        return entry_path(self.folder, key)

    def get(self, key: str) -> TimingSummary | None:
        """The known timing for `key`, marked as reused, or None. A damaged file is a miss."""
        summary = self._known.get(key)
        if summary is None and self.folder is not None:
            try:
                summary = TimingSummary.model_validate_json(self._path(key).read_bytes())
            except (OSError, ValueError):
                summary = None
            if summary is not None:
                self._known[key] = summary
        if summary is None:
            return None
        self.reused += 1
        return summary.model_copy(update={"reused_from": key})

    def put(self, key: str, summary: TimingSummary) -> None:
        """Remember `summary` under `key` (on disk too, best effort: a folder that cannot be written costs a later
        evaluation one reference timing, not this one its result)."""
        self._known[key] = summary
        if self.folder is None:
            return
        write_whole(self._path(key), summary.model_dump_json().encode())
