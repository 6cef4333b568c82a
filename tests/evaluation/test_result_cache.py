"""The result cache: what the key covers, hits and misses, atomic writes, damaged entries."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

import solbench
from conftest import VECTOR_ADD, make_solution, vector_workloads, write_problem
from solbench import atomic_files
from solbench.evaluation import EvaluationConfig, result_cache
from solbench.evaluation.correctness import Verdict
from solbench.evaluation.outcome import RunContext, make_trace
from solbench.evaluation.result_cache import (
    CacheEntry,
    CacheWarning,
    ResultCache,
    ResultCacheError,
    cache_key,
    cached_evaluation,
)
from solbench.sandbox import TimingPlan
from solbench.spec import load_problem
from solbench.spec.trace import CheckOutcome, Environment, EvaluationStatus

ADD = "import torch\ndef run(x, y):\n    return x + y\n"
CPU = EvaluationConfig(device="cpu", memory_limit_bytes=4 << 30)


@pytest.fixture
def problem(vector_add_problem):
    return load_problem(vector_add_problem)


def _traces(problem, status=EvaluationStatus.COMPILE_ERROR, log="build failed", solution="candidate"):
    """Traces as the evaluator makes them, without a sandbox (statuses that need no measurement)."""
    context = RunContext(
        definition=problem.name,
        solution=solution,
        environment=Environment(hardware="test"),
        device="cpu",
        device_name="test",
        clock={},
    )
    return [make_trace(context, w, status, log, failure="no compiler") for w in problem.workloads]


# --- the key ------------------------------------------------------------------------------------
def test_the_key_is_stable_and_ignores_name_author_and_source_order(problem):
    extra = {"helper.py": "X = 1\n"}
    first = make_solution(ADD, extra_sources=extra)
    renamed = first.model_copy(
        update={"name": "other", "author": "someone else", "sources": list(reversed(first.sources))}
    )
    key = cache_key(problem, first, CPU)
    assert len(key) == 64 and int(key, 16) >= 0
    assert cache_key(problem, renamed, CPU) == key


@pytest.mark.parametrize("change", ["source", "spec", "workload", "definition", "config", "harness", "device"])
def test_each_part_of_the_evaluation_changes_the_key(problem, vector_add_problem, tmp_path, monkeypatch, change):
    solution, config = make_solution(ADD), CPU
    key = cache_key(problem, solution, config)
    if change == "source":
        solution = make_solution(ADD + "# changed\n")
    elif change == "spec":
        solution = solution.model_copy(
            update={"spec": solution.spec.model_copy(update={"destination_passing_style": True})}
        )
    elif change == "workload":
        problem = load_problem(write_problem(tmp_path / "other", VECTOR_ADD, vector_workloads(1000, 4100)))
    elif change == "definition":
        changed = dict(VECTOR_ADD, reference=VECTOR_ADD["reference"] + "# changed\n")
        problem = load_problem(write_problem(tmp_path / "other", changed, vector_workloads(1000, 4099)))
    elif change == "config":
        config = replace(config, timing=TimingPlan(budget_s=0.5))
    elif change == "harness":
        monkeypatch.setattr(result_cache, "harness_version", lambda: "0.1.0+changed")
    elif change == "device":
        monkeypatch.setattr(result_cache, "device_name", lambda device: "another CPU")
    assert cache_key(problem, solution, config) != key


def test_a_source_under_another_path_changes_the_key(problem):
    """Where a source lies decides what the solution does (`import helper` finds it or not): the same contents
    under another path are another solution and must not be answered from the first one's entry."""
    here = make_solution(ADD, extra_sources={"helper.py": "X = 1\n"})
    moved = make_solution(ADD, extra_sources={"helpers.py": "X = 1\n"})  # same contents, same order of sources
    assert cache_key(problem, moved, CPU) != cache_key(problem, here, CPU)


def test_where_the_problem_lives_is_not_in_the_key(problem, tmp_path):
    moved_dir = write_problem(tmp_path / "elsewhere" / "vector_add", VECTOR_ADD, vector_workloads(1000, 4099))
    moved = load_problem(moved_dir)
    solution = make_solution(ADD)
    assert cache_key(moved, solution, replace(CPU, data_roots=(tmp_path,))) == cache_key(problem, solution, CPU)


def test_data_file_bytes_are_in_the_key(tmp_path):
    definition = dict(VECTOR_ADD)
    workloads = [
        {
            "uuid": "w",
            "axes": {"N": 4},
            "inputs": {"x": {"type": "safetensors", "path": "data/x.st", "tensor_key": "x"}, "y": {"type": "random"}},
        }
    ]
    root = write_problem(tmp_path / "p", definition, workloads)
    (root / "data").mkdir()
    (root / "data" / "x.st").write_bytes(b"first")
    problem, solution = load_problem(root), make_solution(ADD)
    key = cache_key(problem, solution, CPU)
    (root / "data" / "x.st").write_bytes(b"second")
    assert cache_key(problem, solution, CPU) != key


def test_the_harness_version_hashes_the_measuring_packages():
    version = result_cache.harness_version()
    assert version.startswith("0.") and "+" in version and len(version.split("+")[1]) == 16


def test_an_edit_to_the_measuring_code_changes_the_harness_version(tmp_path, monkeypatch):
    """An entry measured by other harness code is never a hit: editing a .py file of any package that
    measures (here in a copy of solbench's own source) gives another harness version, hence other keys."""
    copy = tmp_path / "solbench"
    shutil.copytree(Path(solbench.__file__).resolve().parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(result_cache, "__file__", str(copy / "evaluation" / "result_cache.py"))
    monkeypatch.setattr(result_cache, "source_hash", result_cache.source_hash.__wrapped__)  # read files each call
    versions = [result_cache.harness_version()]
    for package in ("sandbox", "evaluation", "guard", "spec"):
        with (copy / package / "__init__.py").open("a") as handle:
            handle.write("# edited\n")
        versions.append(result_cache.harness_version())
    assert len(set(versions)) == len(versions), versions


# --- hits, misses and what is stored ---------------------------------------------------------------
def test_a_hit_returns_the_stored_traces_marked_without_measuring(problem, tmp_path):
    solution, measured = make_solution(ADD), []

    def measure():
        measured.append(1)
        return _traces(problem)

    first = cached_evaluation(tmp_path / "cache", problem, solution, CPU, measure)
    renamed = solution.model_copy(update={"name": "renamed"})
    second = cached_evaluation(tmp_path / "cache", problem, renamed, CPU, measure)
    assert len(measured) == 1
    key = cache_key(problem, solution, CPU)
    assert [t.evaluation.solbench.cache.model_dump() for t in first] == [
        {"key": key, "hit": False, "stored": True, "reason": None}
    ] * 2
    assert [t.evaluation.solbench.cache.hit for t in second] == [True, True]
    assert [t.solution for t in second] == ["renamed", "renamed"]

    def without_cache(trace):
        data = trace.model_dump(mode="json")
        del data["evaluation"]["solbench"]["cache"], data["solution"]
        return data

    assert [without_cache(t) for t in second] == [without_cache(t) for t in first]


def test_a_new_harness_version_measures_again(problem, tmp_path, monkeypatch):
    solution, measured = make_solution(ADD), []

    def measure():
        measured.append(1)
        return _traces(problem)

    cached_evaluation(tmp_path / "cache", problem, solution, CPU, measure)
    monkeypatch.setattr(result_cache, "harness_version", lambda: "0.1.0+edited")
    traces = cached_evaluation(tmp_path / "cache", problem, solution, CPU, measure)
    assert len(measured) == 2 and not traces[0].evaluation.solbench.cache.hit


def test_refresh_measures_again_and_overwrites(problem, tmp_path):
    solution = make_solution(ADD)
    cached_evaluation(tmp_path / "cache", problem, solution, CPU, lambda: _traces(problem, log="old"))
    fresh = cached_evaluation(
        tmp_path / "cache", problem, solution, CPU, lambda: _traces(problem, log="new"), refresh=True
    )
    assert all(not t.evaluation.solbench.cache.hit and "new" in t.evaluation.log for t in fresh)
    again = cached_evaluation(tmp_path / "cache", problem, solution, CPU, lambda: pytest.fail("measured on a hit"))
    assert all(t.evaluation.solbench.cache.hit and "new" in t.evaluation.log for t in again)


@pytest.mark.parametrize(
    "status",
    [
        EvaluationStatus.TIMEOUT,
        EvaluationStatus.RUNTIME_ERROR,
        EvaluationStatus.INVALID_REFERENCE,
        EvaluationStatus.REWARD_HACK,
    ],
)
def test_runs_the_machine_may_have_decided_are_not_stored(problem, tmp_path, status):
    solution, measured = make_solution(ADD), []

    def measure():
        measured.append(1)
        return _traces(problem)[:1] + _traces(problem, status)[1:]

    for _ in range(2):
        traces = cached_evaluation(tmp_path / "cache", problem, solution, CPU, measure)
    assert len(measured) == 2 and not list((tmp_path / "cache").rglob("*.json"))
    record = traces[0].evaluation.solbench.cache
    assert not record.hit and not record.stored and status.value in record.reason


def _failed_traces(problem, status, rule, value=float("inf")):
    context = RunContext(
        definition=problem.name,
        solution="candidate",
        environment=Environment(hardware="test"),
        device="cpu",
        device_name="test",
        clock={},
    )
    failure = CheckOutcome(rule=rule, passed=False, value=value, detail="failed")
    verdict = Verdict(checks=[failure], failure=failure, max_relative_error=value, has_inf=True)
    return [make_trace(context, w, status, verdict=verdict, rounds=1) for w in problem.workloads]


@pytest.mark.parametrize(
    "status, rule",
    [(EvaluationStatus.REWARD_HACK, "static:timer_patch"), (EvaluationStatus.INCORRECT_NUMERICAL, "tolerance")],
)
def test_settled_failures_are_stored_infinities_included(problem, tmp_path, status, rule):
    solution = make_solution(ADD)
    first = cached_evaluation(tmp_path / "cache", problem, solution, CPU, lambda: _failed_traces(problem, status, rule))
    assert first[0].evaluation.solbench.cache.stored and first[0].evaluation.status is status
    again = cached_evaluation(tmp_path / "cache", problem, solution, CPU, lambda: pytest.fail("measured on a hit"))
    assert again[0].evaluation.solbench.cache.hit and again[0].evaluation.solbench.checks[0].value == float("inf")
    if status is EvaluationStatus.INCORRECT_NUMERICAL:
        assert again[0].evaluation.correctness.max_relative_error == float("inf")


def test_an_interrupted_run_stores_nothing(problem, tmp_path):
    def interrupted():
        raise KeyboardInterrupt("stopped")

    with pytest.raises(KeyboardInterrupt, match="stopped"):
        cached_evaluation(tmp_path / "cache", problem, make_solution(ADD), CPU, interrupted)
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))


@pytest.mark.parametrize("damage", [b"", b'{"format": 1, "key": "', b"not json", b'{"format": 2}'])
def test_a_damaged_entry_is_a_miss_with_a_warning_and_is_replaced(problem, tmp_path, damage):
    solution = make_solution(ADD)
    cached_evaluation(tmp_path / "cache", problem, solution, CPU, lambda: _traces(problem))
    path = ResultCache(tmp_path / "cache").path_of(cache_key(problem, solution, CPU))
    path.write_bytes(damage)
    with pytest.warns(CacheWarning, match="damaged cache entry"):
        traces = cached_evaluation(tmp_path / "cache", problem, solution, CPU, lambda: _traces(problem))
    assert not traces[0].evaluation.solbench.cache.hit
    assert CacheEntry.model_validate_json(path.read_bytes()).key == cache_key(problem, solution, CPU)


def test_a_failed_write_warns_keeps_the_result_and_leaves_no_temporary_file(problem, tmp_path, monkeypatch):
    def full_disk(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_files.os, "replace", full_disk)
    with pytest.warns(CacheWarning, match="cannot write the entry .No space left on device."):
        traces = cached_evaluation(tmp_path / "cache", problem, make_solution(ADD), CPU, lambda: _traces(problem))
    record = traces[0].evaluation.solbench.cache
    assert len(traces) == 2 and not record.stored and "No space left" in record.reason
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))


def test_an_entry_for_other_workloads_is_a_miss(problem, tmp_path):
    solution = make_solution(ADD)
    key = cache_key(problem, solution, CPU)
    store = ResultCache(tmp_path / "cache")
    store.store(key, _traces(problem)[:1])
    with pytest.warns(CacheWarning, match="does not match its key or the problem's workloads"):
        assert store.load(key, problem) is None


def test_a_cache_path_that_is_a_file_is_a_usage_error(problem, tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(ResultCacheError, match="file: result cache: not a folder"):
        cached_evaluation(tmp_path / "file", problem, make_solution(ADD), CPU, lambda: _traces(problem))


def _write_many(root: str, key: str, problem_dir: str, writer: int, count: int) -> None:
    problem = load_problem(problem_dir)
    store = ResultCache(root)
    for index in range(count):
        store.store(key, _traces(problem, log=f"writer {writer} entry {index} " + "x" * 20000))


@pytest.mark.slow
def test_concurrent_writers_never_leave_a_torn_entry(problem, vector_add_problem, tmp_path):
    key = cache_key(problem, make_solution(ADD), CPU)
    context = multiprocessing.get_context("fork")
    writers = [
        context.Process(target=_write_many, args=(str(tmp_path / "cache"), key, str(vector_add_problem), w, 60))
        for w in range(2)
    ]
    for writer in writers:
        writer.start()
    store, reads = ResultCache(tmp_path / "cache"), 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)  # a torn entry would warn: fail instead
        while any(w.is_alive() for w in writers) or reads == 0:
            traces = store.load(key, problem)
            if traces is not None:
                reads += 1
                assert len({t.evaluation.log for t in traces}) == 1  # both traces from one write
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert reads > 0
    assert [p.name for p in (tmp_path / "cache").rglob("*") if p.is_file()] == [f"{key}.json"]  # no temporary file left


# --- through the evaluator -------------------------------------------------------------------------
@pytest.mark.slow
def test_evaluate_with_a_cache_hits_without_a_sandbox_and_misses_on_a_changed_source(
    vector_add_problem, tmp_path, fast_config, monkeypatch
):
    from solbench.evaluation import evaluate, evaluator

    started = []
    original = evaluator.SandboxSession

    def counting_session(*args, **kwargs):
        started.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(evaluator, "SandboxSession", counting_session)
    problem, cache = load_problem(vector_add_problem), tmp_path / "cache"
    first = evaluate(problem, make_solution(ADD), fast_config, cache=cache)
    sessions = len(started)
    assert sessions >= 1 and [t.evaluation.status for t in first] == [EvaluationStatus.PASSED] * 2
    assert not first[0].evaluation.solbench.cache.hit and first[0].evaluation.solbench.cache.stored
    second = evaluate(problem, make_solution(ADD), fast_config, cache=cache)
    assert len(started) == sessions  # no sandbox on a hit
    assert [t.evaluation.solbench.cache.hit for t in second] == [True, True]
    assert [t.evaluation.performance for t in second] == [t.evaluation.performance for t in first]
    changed = evaluate(problem, make_solution(ADD + "# edited\n"), fast_config, cache=cache)
    assert len(started) > sessions and not changed[0].evaluation.solbench.cache.hit
    assert json.loads(first[0].model_dump_json())["evaluation"]["solbench"]["cache"]["hit"] is False
