"""The gymnasium adapter passes gymnasium's own environment checker, and evaluates a solution given as JSON text."""

from __future__ import annotations

import json
import warnings

import pytest

from conftest import solution_dict
from optimize.candidates import FAST, baselines_file, vector_add


@pytest.mark.slow
def test_the_gymnasium_adapter_passes_the_environment_checker_and_steps_a_solution(tmp_path, fast_config):
    from gymnasium.utils.env_checker import check_env

    from solbench.optimize.gym_env import SolbenchGymEnv

    problem = vector_add(tmp_path / "vector_add", 1000, 4099)
    baselines = baselines_file(tmp_path / "baselines.json", "H100_SXM", "n1000", "n4099")
    env = SolbenchGymEnv(
        problem, hardware="H100_SXM", config=fast_config, baselines=baselines, held_out=[], cache=tmp_path / "cache"
    )
    # Random text actions are not solutions: answered with the failing reward, nothing evaluated or charged.
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gymnasium reports softer findings as warnings: none may be left
        check_env(env, skip_render_check=True)
    assert env.env.history == [] and env.env.budget_left.evals_used == 0

    observation, info = env.reset(seed=1)
    assert json.loads(observation["card"])["problem"] == "vector_add" and observation["feedback"] == ""
    observation, reward, terminated, truncated, info = env.step(json.dumps(solution_dict(FAST)))
    assert env.observation_space.contains(observation) and reward > 0 and not terminated and not truncated
    assert info["correct"] and info["candidate_id"] == 1
    assert [f["status"] for f in json.loads(observation["feedback"])["feedback"]] == ["PASSED", "PASSED"]
    _, reward, _, _, info = env.step("{not json")
    assert reward == 0 and "not JSON" in info["invalid_action"]
