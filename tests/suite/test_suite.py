"""The shipped suite (problems/): the counts the issue sets, and `solbench validate` clean on all of it."""

from collections import Counter
from pathlib import Path

import pytest

from solbench.hardware import lookup
from solbench.spec.problem import find_problem_folders, load_problem
from solbench.suite.stats import suite_stats

SUITE = Path(__file__).resolve().parents[2] / "problems"
MINIMUM_PER_SET = {"L1": 45, "L2": 40, "Quant": 15, "FIB": 15, "DLRM": 12}
SIX_DOMAINS = {"language", "diffusion", "vision", "speech", "video", "multimodal"}


@pytest.fixture(scope="module")
def problems():
    return [load_problem(folder) for folder in find_problem_folders(SUITE)]


def test_the_suite_meets_its_counts():
    """Issue 5's floor (sets, 20% backward, 40 models, six domains) and SOL-ExecBench's makeup (suite.targets)."""
    from solbench.suite.targets import target_report

    stats = suite_stats(SUITE)
    by_set = stats.counts["set"]
    short = {s: (by_set.get(s, 0), n) for s, n in MINIMUM_PER_SET.items() if by_set.get(s, 0) < n}
    assert not short, f"sets below their minimum (have, need): {short}"
    assert stats.backward_share >= 0.20, stats.backward_share
    assert SIX_DOMAINS <= set(stats.counts["domain"]), stats.counts["domain"]
    assert stats.counts["origin"].get("extract", 0) >= 20
    unmet = [row for row in target_report(stats) if not row["met"]]
    assert not unmet, unmet


def test_every_problem_names_its_model_and_config(problems):
    for problem in problems:
        for key in ("set", "model", "domain", "pass", "origin"):  # hf: only where the model has a HF id
            assert problem.definition.tag(key), f"{problem.name}: no {key}: tag"
        assert any(t.startswith("config:") for t in problem.definition.tags), f"{problem.name}: cites no config"
        assert problem.definition.op_type and problem.definition.description


def test_every_problem_has_eight_distinct_workloads_with_tolerances(problems):
    for problem in problems:
        assert len(problem.workloads) >= 8, problem.name
        assert len({tuple(sorted(w.axes.items())) for w in problem.workloads}) == len(problem.workloads), problem.name
        assert all(w.tolerance is not None for w in problem.workloads), problem.name


def test_problem_names_are_unique(problems):
    counts = Counter(p.name for p in problems)
    assert not [n for n, c in counts.items() if c > 1]


def test_no_two_problems_compute_the_same(problems):
    from solbench.suite.duplicates import find_duplicates

    exact = [f"{d.first} = {d.second}" for d in find_duplicates(problems) if d.exact]
    assert not exact, exact


@pytest.mark.slow
def test_validate_passes_on_the_whole_suite():
    """CI validates the suite: references run on the CPU, nothing degenerate, full T_SOL coverage."""
    from solbench.suite.validate import validate_path

    reports = validate_path(SUITE, lookup("H200"), workers=2)
    failures = [
        f"{r.name or r.path}: {f.check}: {f.message}" for r in reports for f in r.findings if f.severity == "error"
    ]
    assert not failures, "\n".join(failures[:20])
