"""The environment as a verifiers taskset: real verifiers rollouts (its SingleAgentEnv, interception server and eval
client) against a scripted model, an OpenAI-compatible endpoint on a real port that replies with a fixed text."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

pytest.importorskip("verifiers", reason="the rl extra: pip install 'solbench[rl]'")

from fastapi import FastAPI, Request  # noqa: E402 - module level: FastAPI resolves the handler's annotations here

from service.conftest import HARDWARE, ThreadServer  # noqa: E402 - after the importorskip, which skips without verifiers
from solbench.service import verifiers_env  # noqa: E402
from solbench.service.episode_envs import EnvOpener, EnvSettings  # noqa: E402
from solbench.spec import load_solution  # noqa: E402

RMSNORM = Path(__file__).resolve().parents[2] / "examples" / "rmsnorm"
KEY_VARIABLE = "SOLBENCH_TEST_MODEL_KEY"


class ScriptedModel:
    """An OpenAI-compatible chat endpoint that answers each request with the next scripted reply, and keeps the
    messages it was sent."""

    def __init__(self, replies: list[str]):
        self.replies = list(replies)
        self.prompts: list[list[dict]] = []
        self.app = FastAPI()

        @self.app.post("/v1/chat/completions")
        async def chat(request: Request) -> dict:
            body = await request.json()
            self.prompts.append(body["messages"])
            message = {"role": "assistant", "content": self.replies.pop(0)}
            return {
                "id": f"scripted-{len(self.prompts)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }


def rollouts(settings: EnvSettings, model_url: str, count: int) -> list:
    """`count` rollouts of the taskset's one task, one after the other, as `vf-eval` runs them."""
    import verifiers.v1 as vf

    config = vf.SingleAgentEnvConfig(
        taskset=verifiers_env.KernelTasksetConfig(problems=[str(RMSNORM)], task={"env": settings}),
        agent={"runtime": {"type": "subprocess"}},
    )
    env = vf.load_environment(config)
    [task] = list(env.taskset)
    client = vf.EvalClientConfig(base_url=model_url + "/v1", api_key_var=KEY_VARIABLE)

    async def run() -> list:
        return [await env.run_episode(task, vf.ModelContext(model="scripted", client=client)) for _ in range(count)]

    return [episode.traces[0] for episode in asyncio.run(run())]


@pytest.mark.slow
def test_a_verifiers_rollout_is_rewarded_with_its_step_result(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_VARIABLE, "not-a-secret")
    settings = EnvSettings(
        hardware=HARDWARE, device="cpu", rounds=1, timing_budget_s=0.05, cache=tmp_path / "cache", reward="gated_sol"
    )
    solution = load_solution(RMSNORM / "solution_pytorch.json")
    reply = f"Here it is:\n```json\n{solution.model_dump_json(exclude_none=True)}\n```\n"
    model = ScriptedModel([reply, "I would rather not write a kernel."])

    with ThreadServer(model.app) as server:
        solved, refused = rollouts(settings, server.url, 2)

    prompt = model.prompts[0][-1]["content"]
    assert "solution.json" in prompt and '"problem": "rmsnorm_fp32_h2048"' in prompt and "gated_sol" in prompt
    assert solved.last_reply == reply.strip() and not solved.errors
    expected = EnvOpener(str(RMSNORM), settings).open(warm_sandboxes=False).step(solution)
    assert expected.info.cache_hit  # the rollout's own evaluation, read back from the result cache
    assert solved.reward == expected.reward > 0 and solved.metrics == {"correct": 1.0, "invalid": 0.0}
    assert refused.reward == 0 and refused.metrics == {"correct": 0.0, "invalid": 1.0} and not refused.errors


def test_a_reply_is_read_whole_or_from_its_json_block():
    text = json.dumps({"name": "x"})
    assert verifiers_env.reply_json(f"  {text}\n") == text
    assert verifiers_env.reply_json(f"Sure.\n```json\n{text}\n```\nDone.") == text
    assert verifiers_env.reply_json(f"```\n{text}\n```") == text
