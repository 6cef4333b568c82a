"""`make(..., profile=True)`: each workload's feedback says where the candidate's time went (the top ops and their
share, from torch.profiler on untimed calls after the timed loop); off by default."""

from __future__ import annotations

import pytest

from conftest import make_solution
from optimize.candidates import baselines_file, vector_add
from solbench.optimize import make
from solbench.optimize.run_settings import config_from_json, config_to_json

HARDWARE = "H100_SXM"
SINE_THEN_ADD = "import torch\n\ndef run(x, y):\n    return torch.add(x, y) + torch.sin(x) * 0\n"


@pytest.mark.slow
def test_a_profiling_environment_gives_each_workload_its_top_ops(tmp_path, fast_config):
    problem = vector_add(tmp_path / "vector_add", 1000, 50000)
    baselines = baselines_file(tmp_path / "baselines.json", HARDWARE, "n1000", "n50000")
    options = {"hardware": HARDWARE, "config": fast_config, "held_out": [], "baselines": baselines}
    with make(problem, profile=True, warm_sandboxes=False, **options) as env:
        result = env.step(make_solution(SINE_THEN_ADD))
        assert [f.status for f in result.feedback] == ["PASSED", "PASSED"]
        for feedback in result.feedback:
            profile = feedback.profile
            assert profile.activity == "cpu" and profile.calls == 3 and profile.total_ms > 0
            assert {"aten::sin", "aten::add"} <= {op.name for op in profile.ops}
            assert all(0 <= op.share <= 1 for op in profile.ops) and sum(op.share for op in profile.ops) <= 1.0001
            assert feedback.log is None  # the profiler's own start and stop lines are not the candidate's output
        assert env.test(make_solution(SINE_THEN_ADD)).passed  # a test times nothing and profiles nothing
    with make(problem, warm_sandboxes=False, **options) as env:
        assert all(f.profile is None for f in env.step(make_solution(SINE_THEN_ADD)).feedback)


def test_a_run_s_profile_setting_is_kept_for_replay(fast_config):
    from dataclasses import replace

    assert config_from_json(config_to_json(replace(fast_config, profile=True))).profile
