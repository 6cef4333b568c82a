import math

import pytest

from solbench.sandbox import stats


def test_summary_statistics_match_hand_computed_values():
    samples = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert stats.mean(samples) == 4.0
    assert stats.median(samples) == 3.0
    assert stats.quantile(samples, 0.1) == pytest.approx(1.4)
    assert stats.quantile(samples, 0.9) == pytest.approx(7.6)
    assert stats.std(samples) == pytest.approx(math.sqrt(12.5))
    assert stats.coefficient_of_variation(samples) == pytest.approx(math.sqrt(12.5) / 4)
    assert stats.relative_standard_error(samples) == pytest.approx(math.sqrt(12.5) / math.sqrt(5) / 4)


def test_degenerate_inputs():
    assert stats.std([3.0]) == 0.0
    assert stats.relative_standard_error([3.0]) == math.inf
    assert stats.coefficient_of_variation([0.0, 0.0]) == 0.0
