"""One set-total rule, `set_total(scores, missing=...)`: the library's reports leave a problem without a score out,
the service's leaderboards count it 0, and every report says which rule its totals follow."""

import pytest

from scoring.test_one_scoring_path import HARDWARE, _trace
from solbench.scoring import score_traces, set_total
from solbench.spec.trace import EvaluationStatus, SolRecord


def test_a_problem_without_a_score_is_left_out_or_counts_zero():
    assert set_total([0.9, 0.6, None], missing="exclude") == pytest.approx(0.75)
    assert set_total([0.9, 0.6, None], missing="zero") == pytest.approx(0.5)
    assert set_total([None, None], missing="exclude") is None and set_total([None, None], missing="zero") == 0.0
    assert set_total([], missing="exclude") is None and set_total([], missing="zero") is None


def test_the_rule_is_always_named():
    with pytest.raises(TypeError):
        set_total([0.5])  # no default: each caller states its rule
    with pytest.raises(ValueError, match="unknown set-total rule"):
        set_total([0.5], missing="skip")


def test_the_score_report_records_the_rule_its_set_totals_follow():
    """p_scored: S = 0.75 (T_b 2, T_SOL 1, T_k 4/3); p_unscored PASSED without T_SOL, so it has no score."""
    sol = SolRecord(hardware=HARDWARE, t_sol_ms=1.0, bound="memory", coverage_full=True)
    traces = [
        _trace("p_scored", "cand", "w0", EvaluationStatus.PASSED, 4 / 3, 2.0, sol),
        _trace("p_unscored", "cand", "w1", EvaluationStatus.PASSED, 1.0, 2.0, None),
    ]
    library = score_traces(traces, HARDWARE)  # the library's rule: exclude
    [entry] = library.sets
    assert (entry.missing, entry.score, entry.scored_problems, entry.problems) == ("exclude", pytest.approx(0.75), 1, 2)
    assert library.as_json()["sets"][0]["missing"] == "exclude"
    counted = score_traces(traces, HARDWARE, missing="zero")
    assert counted.sets[0].score == pytest.approx(0.375) and counted.as_json()["sets"][0]["missing"] == "zero"
    assert [p.score for p in counted.problems] == [p.score for p in library.problems]  # problems are not affected
