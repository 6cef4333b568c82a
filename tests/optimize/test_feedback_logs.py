"""Passing workloads carry their log too (what the candidate printed), bounded and told once, as errors are."""

from __future__ import annotations

import pytest

from conftest import make_solution
from optimize.candidates import baselines_file, vector_add
from solbench.optimize import make
from solbench.optimize.feedback import MAX_LOG_CHARS

HARDWARE = "H100_SXM"
CHATTY = (
    "import torch\n\ndef run(x, y):\n    print(f'rows {x.shape[0]}')\n    print('noise ' * 2000)\n    return x + y\n"
)
SAME_EVERYWHERE = "import torch\n\ndef run(x, y):\n    print('using torch.add')\n    return torch.add(x, y)\n"
QUIET = "import torch\n\ndef run(x, y):\n    return x + y\n"


@pytest.mark.slow
def test_a_passing_workload_s_log_is_given_bounded_and_once(tmp_path, fast_config):
    problem = vector_add(tmp_path / "vector_add", 1000, 4099)
    baselines = baselines_file(tmp_path / "baselines.json", HARDWARE, "n1000", "n4099")
    with make(
        problem, hardware=HARDWARE, config=fast_config, held_out=[], baselines=baselines, warm_sandboxes=False
    ) as env:
        chatty = env.step(make_solution(CHATTY, name="chatty"))
        assert [f.status for f in chatty.feedback] == ["PASSED", "PASSED"]
        for feedback, rows in zip(chatty.feedback, (1000, 4099)):
            assert f"rows {rows}" in feedback.log and "characters cut" in feedback.log
            assert len(feedback.log) <= MAX_LOG_CHARS + 60 and feedback.error is None  # + the cut marker

        same = env.test(make_solution(SAME_EVERYWHERE, name="same"))
        first, second = same.workloads
        assert "using torch.add" in first.log and (second.log, second.same_log_as) == (None, "n1000")

        quiet = env.step(make_solution(QUIET, name="quiet"))
        assert all(f.log is None and f.same_log_as is None for f in quiet.feedback)
