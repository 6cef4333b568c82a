"""The environment's parts without a sandbox: the held-out rule, the ledger, rewards, bounded feedback, actions."""

from __future__ import annotations

import math

import pytest

from conftest import VECTOR_ADD, vector_workloads, write_problem
from solbench.errors import SolbenchError
from solbench.optimize import (
    Budget,
    BudgetExhausted,
    BudgetLedger,
    InvalidBudget,
    InvalidCandidate,
    InvalidHeldOut,
    InvalidReward,
    WorkloadFeedback,
    make,
    solution_from_text,
    split_workloads,
)
from solbench.optimize.feedback import MAX_ERROR_CHARS, truncate
from solbench.optimize.rewards import LOG_SPEEDUP_FLOOR, reward_of
from solbench.spec import load_problem


@pytest.fixture
def eight(tmp_path):
    return load_problem(write_problem(tmp_path / "vector_add", VECTOR_ADD, vector_workloads(*range(100, 900, 100))))


def test_the_default_rule_holds_out_a_quarter_the_same_every_time_and_never_below_four_workloads(eight, tmp_path):
    public, held_out = split_workloads(eight)
    assert len(held_out) == 2 and len(public) == 6 and split_workloads(eight) == (public, held_out)
    assert [w.uuid for w in public + held_out if w in held_out] == [w.uuid for w in held_out]
    assert {w.uuid for w in public} | {w.uuid for w in held_out} == {w.uuid for w in eight.workloads}
    three = load_problem(write_problem(tmp_path / "three", VECTOR_ADD, vector_workloads(1, 2, 3)))
    assert split_workloads(three)[1] == ()
    assert len(split_workloads(eight, 0.5)[1]) == 4 and split_workloads(eight, 0)[1] == ()


def test_held_out_workloads_can_be_named_and_bad_choices_say_why(eight):
    assert [w.uuid for w in split_workloads(eight, ["n200", "n700"])[1]] == ["n200", "n700"]
    with pytest.raises(InvalidHeldOut, match="nope: not a workload of vector_add"):
        split_workloads(eight, ["nope"])
    with pytest.raises(InvalidHeldOut, match="leave at least one public"):
        split_workloads(eight, [w.uuid for w in eight.workloads])
    with pytest.raises(InvalidHeldOut, match="below 1"):
        split_workloads(eight, 1.0)
    with pytest.raises(InvalidHeldOut, match="list of workload uuids"):
        split_workloads(eight, "n200")


def test_the_ledger_charges_what_measured_and_refuses_once_spent():
    ledger = BudgetLedger(Budget(evals=2, seconds=10))
    ledger.charge("eval", 3.0, cache_hit=False)
    ledger.charge("eval", 0.1, cache_hit=True)  # a hit is free
    left = ledger.left()
    assert (left.evals, left.evals_used, left.cache_hits, left.seconds, left.exhausted) == (1, 1, 1, 7.0, False)
    ledger.charge("test", 8.0, cache_hit=False)  # tests spend the shared seconds
    assert ledger.exhausted
    with pytest.raises(BudgetExhausted, match=r"11.0 s of 10 s measuring used"):
        ledger.check("eval")
    assert BudgetLedger().left().evals is None and not BudgetLedger().exhausted
    for bad in (dict(evals=-1), dict(tests=1.5), dict(seconds=float("nan")), dict(evals=True)):
        with pytest.raises(InvalidBudget):
            Budget(**bad)


def _workload(status="PASSED", score=0.5, speedup=2.0, **fields):
    return WorkloadFeedback(
        workload="w",
        status=status,
        score=score if status == "PASSED" else 0.0,
        speedup=speedup if status == "PASSED" else None,
        **fields,
    )


def test_rewards_score_correct_candidates_and_give_cheats_the_failing_value():
    good = [_workload(score=0.6, speedup=2.0), _workload(score=0.8, speedup=8.0)]
    assert reward_of("sol", good) == pytest.approx(0.7)
    assert reward_of("speedup", good) == pytest.approx(4.0)
    assert reward_of("log_speedup", good) == pytest.approx(math.log(4.0))
    partly = [_workload(score=0.6), _workload(status="INCORRECT_NUMERICAL")]
    assert reward_of("sol", partly) == pytest.approx(0.3)  # as `solbench score`: a failed workload counts 0
    assert reward_of("speedup", partly) == 0 and reward_of("log_speedup", partly) == LOG_SPEEDUP_FLOOR
    cheat = [_workload(score=1.0, speedup=100.0), _workload(status="REWARD_HACK")]
    assert [reward_of(name, cheat) for name in ("sol", "speedup", "log_speedup")] == [0, 0, LOG_SPEEDUP_FLOOR]
    assert reward_of("log_speedup", [_workload(speedup=1e-6)]) == LOG_SPEEDUP_FLOOR


def test_gated_sol_is_0_unless_every_public_workload_passed_else_s():
    good = [_workload(score=0.6), _workload(score=0.8)]
    assert reward_of("gated_sol", good) == pytest.approx(0.7) == reward_of("sol", good)
    one_failed = [_workload(score=0.6), _workload(score=0.8), _workload(status="RUNTIME_ERROR")]
    assert reward_of("sol", one_failed) > 0 and reward_of("gated_sol", one_failed) == 0
    assert reward_of("gated_sol", []) == 0
    assert reward_of("gated_sol", [_workload(score=1.0), _workload(status="REWARD_HACK")]) == 0


def test_long_errors_keep_their_head_and_tail_within_the_bound():
    text = "first line\n" + "x" * 10_000 + "\nlast line"
    cut = truncate(text)
    assert len(cut) < MAX_ERROR_CHARS + 100 and cut.startswith("first line") and cut.endswith("last line")
    assert "characters cut" in cut and truncate("short") == "short"


def test_an_action_that_is_not_a_solution_is_an_invalid_candidate_naming_the_field(tmp_path):
    with pytest.raises(InvalidCandidate, match="solution: not JSON"):
        solution_from_text("{oops")
    with pytest.raises(InvalidCandidate, match="solution: must be a JSON object"):
        solution_from_text("[1]")
    with pytest.raises(InvalidCandidate, match=r"solution\.spec: Field required"):
        solution_from_text('{"name": "a", "definition": "vector_add", "author": "me", "sources": []}')
    assert issubclass(InvalidCandidate, SolbenchError)


def test_make_checks_its_arguments_before_anything_runs(tmp_path):
    problem = write_problem(tmp_path / "vector_add", VECTOR_ADD, vector_workloads(10))
    with pytest.raises(InvalidReward, match="unknown reward 'fast'.*sol, speedup, log_speedup"):
        make(problem, hardware="H100_SXM", reward="fast")
    with pytest.raises(SolbenchError, match="unknown hardware 'H999'"):
        make(problem, hardware="H999")


def test_make_and_budget_come_from_solbench_without_importing_torch():
    import subprocess
    import sys

    code = (
        "import sys, solbench; solbench.make, solbench.Budget(evals=1); "
        "assert 'torch' not in sys.modules and 'gymnasium' not in sys.modules and 'mcp' not in sys.modules"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
