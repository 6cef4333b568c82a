"""The result cache: finished evaluations stored on disk under a key over everything that decides them.

The key (`cache_key`) is a sha256 over the normalised solution (spec and sources, not its name or
author), the problem (definition, workloads and the bytes of the data files they read), the
harness version (`harness_version`), the device identity (`device_identity`) and every setting of
the evaluation config. An entry is one JSON file, `DIR/<key[:2]>/<key>.json`, written atomically
(temporary file in the same folder, fsync, rename), so a reader sees a whole entry or none. An
entry that cannot be read is a miss and a `CacheWarning`, never an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import platform
import warnings
from collections.abc import Callable
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from solbench.atomic_files import write_whole
from solbench.errors import SolbenchError
from solbench.evaluation.config import EvaluationConfig
from solbench.evaluation.environment import device_name
from solbench.spec.problem import Problem, find_data_file
from solbench.spec.solution import Solution
from solbench.spec.trace import CacheRecord, EvaluationStatus, Trace
from solbench.spec.workload import SafetensorsInput
from solbench.version import __version__

CACHE_FORMAT = 1
HARNESS_PACKAGES = ("sandbox", "evaluation", "guard", "spec")
"""The packages whose source decides a measurement: a change to any file in them changes every key."""
_CONFIG_NOT_IN_KEY = ("data_roots",)
"""Where data files are looked for is not in the key; the bytes of the files found are."""
SETTLED_STATUSES = frozenset(
    {
        EvaluationStatus.PASSED,
        EvaluationStatus.INCORRECT_SHAPE,
        EvaluationStatus.INCORRECT_DTYPE,
        EvaluationStatus.INCORRECT_NUMERICAL,
        EvaluationStatus.COMPILE_ERROR,
    }
)
"""Statuses decided by the solution and the problem alone. TIMEOUT, RUNTIME_ERROR (crashes, out of
memory), INVALID_REFERENCE and REWARD_HACK found at run time can depend on the machine's load and
state, so an evaluation with any of them is measured again next time; a REWARD_HACK from the
static check is decided by the sources alone and is stored. IMPLAUSIBLE never reaches the cache: it is
decided after the evaluation, against a hardware's T_SOL (scoring), and a cached PASSED trace is judged again
each time it is scored."""


class CacheWarning(UserWarning, SolbenchError):
    """A cache entry could not be read or written; the evaluation went on without it.

    Issued with `warnings.warn`, never raised; a SolbenchError like every solbench exception class.
    """


class ResultCacheError(SolbenchError):
    """The cache folder cannot be used."""

    def __init__(self, path: Path, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: result cache: {reason}")


class CacheEntry(BaseModel):
    """One stored evaluation: the traces of every workload, in the problem's order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal[1]
    key: str
    created: str
    harness_version: str
    traces: list[Trace]


# --- the key ------------------------------------------------------------------------------------
@cache
def source_hash(packages: tuple[str, ...]) -> str:
    """A hash of every .py file (path and content) in solbench's `packages`, read once per process."""
    root = Path(__file__).resolve().parents[1]  # solbench/, this file being solbench/evaluation/result_cache.py
    digest = hashlib.sha256()
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def harness_version() -> str:
    """solbench's version plus a hash of every .py file in HARNESS_PACKAGES (path and content)."""
    return f"{__version__}+{source_hash(HARNESS_PACKAGES)}"


def device_identity(device: str) -> dict[str, str]:
    """The device kind, its model (CPU model or GPU name) and the versions of the libraries that run on it.

    Versions come from package metadata, so a CPU key does not import torch.
    """
    identity = {"kind": device.split(":")[0], "name": device_name(device), "python": platform.python_version()}
    for package in ("torch", "numpy", "triton"):
        try:
            identity[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    return identity


def solution_material(solution: Solution) -> dict:
    """What decides a solution's behaviour: its build spec and sources sorted by path (not name or author)."""
    sources = sorted((s.path, s.content) for s in solution.sources)
    return {"definition": solution.definition, "spec": solution.spec.model_dump(mode="json"), "sources": sources}


def problem_material(problem: Problem, data_roots: tuple[Path, ...] = ()) -> dict:
    """The definition, the workloads in order, and a sha256 of each data file a workload reads."""
    data_files = {}
    for workload in problem.workloads:
        for spec in workload.inputs.values():
            if isinstance(spec, SafetensorsInput) and spec.path not in data_files:
                data_files[spec.path] = _file_sha256(find_data_file(problem, spec.path, data_roots))
    return {
        "definition": problem.definition.model_dump(mode="json"),
        "workloads": [w.model_dump(mode="json") for w in problem.workloads],
        "data_files": data_files,
    }


def config_material(config: EvaluationConfig) -> dict:
    """Every config field but data roots; a field added later is in the key without a change here."""
    fields = dataclasses.asdict(config)
    for name in _CONFIG_NOT_IN_KEY:
        fields.pop(name, None)
    return fields


def cache_key(problem: Problem, solution: Solution, config: EvaluationConfig) -> str:
    """The sha256 hex key of evaluating `solution` on `problem` under `config` here, with this harness."""
    config = config.resolved().with_threads()
    material = {
        "format": CACHE_FORMAT,
        "solution": solution_material(solution),
        "problem": problem_material(problem, config.data_roots),
        "harness": harness_version(),
        "device": device_identity(config.device),
        "config": config_material(config),
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- storing and reading ------------------------------------------------------------------------
def unsettled_reason(traces: list[Trace]) -> str | None:
    """Why these traces should not be stored (a status the machine's state may have decided), or None."""
    for trace in traces:
        evaluation = trace.evaluation
        if evaluation is None or evaluation.solbench is None:
            return "a trace without solbench's record"
        static_finding = (evaluation.solbench.failed_rule or "").startswith("static:")
        if evaluation.status in SETTLED_STATUSES or (
            evaluation.status is EvaluationStatus.REWARD_HACK and static_finding
        ):
            continue
        return f"{evaluation.status.value} on workload {trace.workload.uuid} may not repeat; it is measured again"
    return None


class ResultCache:
    """A folder of cache entries. Creating one creates the folder (or raises ResultCacheError)."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise ResultCacheError(self.root, "not a folder")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ResultCacheError(self.root, f"cannot create the folder: {error.strerror or error}") from None

    def path_of(self, key: str) -> Path:
        return entry_path(self.root, key)

    def load(self, key: str, problem: Problem) -> list[Trace] | None:
        """The stored traces for `key`, or None on a miss. A damaged entry warns and is a miss."""
        path = self.path_of(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            return _warn(f"{path}: unreadable cache entry ({error.strerror or error}); measuring again")
        try:
            entry = CacheEntry.model_validate_json(data)
        except ValidationError as error:
            return _warn(
                f"{path}: damaged cache entry ({error.error_count()} error(s), first: "
                f"{error.errors()[0]['msg']}); measuring again"
            )
        uuids = [t.workload.uuid for t in entry.traces]
        if entry.key != key or uuids != [w.uuid for w in problem.workloads]:
            return _warn(f"{path}: cache entry does not match its key or the problem's workloads; measuring again")
        return entry.traces

    def store(self, key: str, traces: list[Trace]) -> str | None:
        """Write the entry atomically: a concurrent reader sees the old entry, the new one, or none.

        Returns None when stored, else why not (and warns): a cache that cannot be written costs
        the next evaluation a measurement, not this one its result.
        """
        entry = CacheEntry(
            format=CACHE_FORMAT,
            key=key,
            harness_version=harness_version(),
            traces=traces,
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )
        path = self.path_of(key)
        reason = write_whole(path, entry.model_dump_json().encode())
        if reason is not None:
            _warn(f"{path}: {reason}; the result is not cached")
        return reason


def entry_path(root: Path, key: str) -> Path:
    """Where a keyed entry lives under `root` (two-character fan-out folders)."""
    return root / key[:2] / f"{key}.json"


def cached_evaluation(
    root: Path | str,
    problem: Problem,
    solution: Solution,
    config: EvaluationConfig,
    measure: Callable[[], list[Trace]],
    refresh: bool = False,
) -> list[Trace]:
    """Traces for this evaluation from the cache at `root`, or from `measure()`, stored when settled.

    `refresh` measures again and overwrites the entry. An exception from `measure` (an interrupted
    run, a harness failure) propagates and stores nothing.
    """
    store = ResultCache(root)
    key = cache_key(problem, solution, config)
    if not refresh:
        stored = store.load(key, problem)
        if stored is not None:
            return [_mark(trace, CacheRecord(key=key, hit=True, stored=True), solution.name) for trace in stored]
    traces = measure()
    reason = unsettled_reason(traces)
    if reason is None:
        reason = store.store(key, traces)
    record = CacheRecord(key=key, hit=False, stored=reason is None, reason=reason)
    return [_mark(trace, record, solution.name) for trace in traces]


def _mark(trace: Trace, record: CacheRecord, solution_name: str) -> Trace:
    """The trace with its cache record, under this solution's name (the name is not in the key)."""
    evaluation = trace.evaluation
    if evaluation is None or evaluation.solbench is None:
        return trace
    details = evaluation.solbench.model_copy(update={"cache": record})
    return trace.model_copy(
        update={"solution": solution_name, "evaluation": evaluation.model_copy(update={"solbench": details})}
    )


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=3)
    return None
