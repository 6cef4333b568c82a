"""Agent metrics against values worked out by hand: the pass@k estimator, and fast_p, pass@k and mean S over
constructed runs with known speedups and held-out verdicts, per problem and per set."""

from __future__ import annotations

from itertools import combinations

import pytest

from optimize.constructed_runs import Planned, write_run
from solbench.optimize.errors import InvalidMetricOption
from solbench.optimize.metrics import agent_metrics, pass_at_k
from solbench.optimize.trajectory_sources import load_trajectories

BROKEN = Planned(statuses=("INCORRECT_NUMERICAL", "PASSED"), score=0.0)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 2 / 5),  # pass@1 is c / n
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (10, 3, 5, 1 - 21 / 252),  # 1 - C(7,5)/C(10,5)
        (4, 2, 3, 1.0),  # n - c < k: every draw of 3 holds a correct one
        (6, 0, 2, 0.0),  # c = 0
        (6, 6, 2, 1.0),  # c = n
        (3, 3, 3, 1.0),  # n = k
        (200, 1, 100, 0.5),  # large binomials, exactly
    ],
)
def test_pass_at_k_is_the_unbiased_estimator(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_k_is_the_chance_that_a_random_k_subset_holds_a_correct_sample():
    for n in range(1, 7):
        for c in range(n + 1):
            for k in range(1, n + 1):
                samples = [True] * c + [False] * (n - c)
                draws = list(combinations(samples, k))
                assert pass_at_k(n, c, k) == pytest.approx(sum(any(d) for d in draws) / len(draws))


def test_pass_at_k_is_undefined_below_k_samples_and_refuses_impossible_counts():
    assert pass_at_k(2, 1, 3) is None
    assert pass_at_k(0, 0, 1) is None
    with pytest.raises(InvalidMetricOption, match="k >= 1"):
        pass_at_k(5, 1, 0)
    with pytest.raises(InvalidMetricOption, match="c <= n"):
        pass_at_k(3, 4, 1)


@pytest.fixture
def runs(tmp_path):
    """Two rollouts of vector_add (L1), one of softmax (L1) whose best fails held-out, one of gemm (no set tag)."""
    return [
        write_run(
            tmp_path / "a",
            [Planned(speedup=0.8, score=0.4), Planned(speedup=2.5, score=0.7), BROKEN],
            final_of=2,
            held_out_score=0.1,
        ),
        write_run(tmp_path / "b", [Planned(speedup=1.1, score=0.55), Planned(not_a_solution=True)], final_of=1),
        write_run(
            tmp_path / "c",
            [Planned(speedup=3.0, score=0.9)],
            final_of=1,
            held_out_status="INCORRECT_NUMERICAL",
            problem="softmax",
        ),
        write_run(tmp_path / "d", [Planned(speedup=2.0, score=0.6)], final_of=1, set_tag=None, problem="gemm"),
    ]


def test_fast_p_pass_at_k_and_mean_s_per_problem(runs):
    metrics = agent_metrics(load_trajectories(runs), fast_p=(1.0, 1.2, 2.0), pass_k=(1, 2, 5))
    by_name = {p.problem: p for p in metrics.problems}
    add = by_name["vector_add"]
    # Final speedups 2.5 and 1.1: both beat T_b, one beats 1.2 and 2.
    assert (add.set, add.rollouts, add.final_correct) == ("L1", 2, 2)
    assert add.fast_p == {"1": 1.0, "1.2": 0.5, "2": 0.5}
    # n = 4 evaluated candidates (the unreadable file is no sample), c = 3 (the broken one fails a workload).
    assert (add.samples, add.correct_samples) == (4, 3)
    assert add.pass_at_k == {"1": pytest.approx(0.75), "2": pytest.approx(1.0), "5": None}
    # S over every workload of the final re-measurement, the held-out one included: (0.7 + 0.7 + 0.1) / 3 for a.
    assert add.mean_score == pytest.approx((0.5 + 0.55) / 2)
    assert add.best_speedup == pytest.approx(2.5)

    # softmax's best passed every public workload but failed the held-out one: not fast, S 0, and not a
    # correct sample either, though its step said correct.
    softmax = by_name["softmax"]
    assert softmax.fast_p == {"1": 0.0, "1.2": 0.0, "2": 0.0} and softmax.mean_score == 0.0
    assert (softmax.samples, softmax.correct_samples, softmax.final_correct) == (1, 0, 0)
    assert softmax.pass_at_k["1"] == 0.0

    # A speedup of exactly p is not faster than p.
    gemm = by_name["gemm"]
    assert gemm.set == "all" and gemm.fast_p == {"1": 1.0, "1.2": 1.0, "2": 0.0}


def test_a_set_weighs_each_problem_the_same(runs):
    metrics = agent_metrics(load_trajectories(runs), fast_p=(1.0, 1.2), pass_k=(1, 2))
    sets = {s.set: s for s in metrics.sets}
    assert list(sets) == ["L1", "all"]
    l1 = sets["L1"]
    assert (l1.problems, l1.rollouts) == (2, 3)
    assert l1.fast_p == {"1": pytest.approx(0.5), "1.2": pytest.approx(0.25)}
    assert l1.mean_score == pytest.approx(((0.5 + 0.55) / 2 + 0) / 2)
    # pass@2 is defined for vector_add (n = 4) only: softmax has one candidate.
    assert l1.pass_at_k == {"1": pytest.approx((0.75 + 0) / 2), "2": pytest.approx(1.0)}
    assert l1.pass_at_k_problems == {"1": 2, "2": 1}


def test_a_rollout_never_finalized_is_not_fast_but_its_candidates_are_samples(tmp_path):
    run = write_run(tmp_path / "a", [Planned(speedup=5.0, score=0.9)], final_of=None)
    (problem,) = agent_metrics(load_trajectories([run])).problems
    assert (problem.finalized, problem.final_correct, problem.mean_score) == (0, 0, 0.0)
    assert problem.fast_p == {"1": 0.0, "1.2": 0.0, "2": 0.0}
    assert problem.pass_at_k["1"] == 1.0


def test_a_folder_of_runs_reads_every_run_below_it(runs, tmp_path):
    assert sorted(t.problem for t in load_trajectories([tmp_path])) == ["gemm", "softmax", "vector_add", "vector_add"]


@pytest.mark.parametrize(
    ("option", "values", "reason"),
    [("fast_p", {"fast_p": (0.0,)}, "above 0"), ("pass@k", {"pass_k": (0,)}, "at least 1")],
)
def test_metric_options_are_checked(runs, option, values, reason):
    with pytest.raises(InvalidMetricOption, match=f"{option} .*{reason}"):
        agent_metrics(load_trajectories(runs), **values)
