"""The environment as an OpenEnv environment: OpenEnv's own server (`create_app`) on a real port, and OpenEnv's own
clients, its generic one and the typed one solbench ships, each running an episode on examples/rmsnorm."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("openenv", reason="the rl extra: pip install 'solbench[rl]'")

from service.conftest import HARDWARE, ThreadServer  # noqa: E402 - after the importorskip, which skips without openenv
from solbench.service import openenv_env  # noqa: E402
from solbench.service.episode_envs import EnvSettings  # noqa: E402
from solbench.spec import load_solution  # noqa: E402

RMSNORM = Path(__file__).resolve().parents[2] / "examples" / "rmsnorm"
PROBLEM = "rmsnorm_fp32_h2048"
"""The definition's name: what the card and the state call the problem."""


def fast_settings(tmp_path: Path, **overrides) -> EnvSettings:
    """On the CPU with one correctness round and a short timing budget; a cache shared by the episodes."""
    settings = {
        "hardware": HARDWARE,
        "budget_evals": 2,
        "device": "cpu",
        "rounds": 1,
        "timing_budget_s": 0.05,
        "cache": tmp_path / "cache",
    }
    return EnvSettings(**{**settings, **overrides})


@pytest.mark.slow
def test_openenv_clients_run_an_episode_reset_step_state(tmp_path):
    solution = load_solution(RMSNORM / "solution_pytorch.json")
    other_problem = solution.model_copy(update={"definition": "vector_add"})

    async def typed_episode(url: str):
        async with openenv_env.SolbenchEnvClient(base_url=url) as client:
            reset = await client.reset(seed=3)
            step = await client.step(openenv_env.SolutionAction(solution=solution))
            refused = await client.step(openenv_env.SolutionAction(solution=other_problem))
            return reset, step, refused, await client.state()

    async def generic_episode(url: str):  # OpenEnv's own untyped client, unchanged: JSON in, JSON out
        from openenv import GenericEnvClient

        async with GenericEnvClient(base_url=url) as client:
            await client.reset()
            step = await client.step({"solution": json.loads(solution.model_dump_json(exclude_none=True))})
            return step, await client.state()

    with ThreadServer(openenv_env.openenv_app(str(RMSNORM), fast_settings(tmp_path), max_sessions=2)) as server:
        reset, step, refused, state = asyncio.run(typed_episode(server.url))
        generic, generic_state = asyncio.run(generic_episode(server.url))

    card = reset.observation.card
    assert isinstance(reset.observation, openenv_env.KernelObservation) and card is not None and card.problem == PROBLEM
    assert card.seed == 3 and card.contract.solution_schema and not reset.done and reset.reward is None
    assert step.reward is not None and step.reward > 0 and step.reward == step.observation.reward
    assert step.observation.info is not None and step.observation.info.correct and not step.done
    assert [f.status for f in step.observation.feedback] == ["PASSED"] * len(card.workloads)
    assert refused.reward == 0 and "definition" in (refused.observation.invalid_action or "")  # nothing charged
    assert isinstance(state, openenv_env.KernelState) and state.problem == PROBLEM and state.step_count == 1
    assert state.budget_left is not None and state.budget_left.evals == 1
    assert state.best is not None and state.best.candidate_id == 1 and state.best.reward == step.reward

    # A second session is a fresh environment of its own (its own budget), answered from the shared result cache.
    assert generic.reward == step.reward and generic.observation["info"]["cache_hit"]
    assert generic_state["step_count"] == 1 and generic_state["budget_left"]["cache_hits"] == 1  # a hit is free
