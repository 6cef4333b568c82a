"""The agent environment over HTTP: a real server (uvicorn) whose embedded workers are real processes, driven by
`solbench.connect`; two users; 8 async rollouts at once; the same env on Celery workers over Redis."""

from __future__ import annotations

import asyncio

import pytest

import solbench
from servers import redis_server, start_worker  # noqa: F401  (fixture)
from service.conftest import HARDWARE, ThreadServer, add_solution, fast_settings, settings_model
from solbench.optimize import Budget, BudgetExhausted, InvalidCandidate
from solbench.service.errors import ServerRefused

WRONG = "import torch\n\ndef run(x, y):\n    return x - y\n"


def tagged(tag: str) -> dict:
    """A correct candidate of its own (the tag changes its source, so the result cache never answers for it)."""
    return add_solution(f"import torch\n\n# {tag}\ndef run(x, y):\n    return x + y\n", name=tag)


class RunningService:
    """`prepare` + `create_app` served by uvicorn in this process; its job queue (embedded worker processes, or
    Celery on a broker) starts with the app, as under `solbench serve`."""

    def __init__(self, root, **overrides):
        from solbench.service.app import create_app, prepare
        from solbench.service.auth import add_user

        settings = settings_model(fast_settings(root, **overrides))
        self.service = prepare(settings)
        self.tokens = {name: add_user(self.service.session_factory, name).token for name in ("ann", "bob")}
        self.server = ThreadServer(create_app(self.service))

    def __enter__(self) -> RunningService:
        self.server.__enter__()
        self.url = self.server.url
        return self

    def __exit__(self, *exc) -> None:
        self.server.__exit__(*exc)
        self.service.engine.dispose()

    def http(self, user: str):
        import httpx

        headers = {"Authorization": f"Bearer {self.tokens[user]}"}
        return httpx.Client(base_url=self.url + "/api/v1", headers=headers, timeout=120)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """One server for the module; its worker processes get a cache folder of their own (the per-test one does not
    exist yet when a module fixture starts them), so what they pin and lock never lands in the user's."""
    from solbench.cache_dir import CACHE_DIR_VARIABLE

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_DIR_VARIABLE, str(tmp_path_factory.mktemp("envs-cache")))
        with RunningService(tmp_path_factory.mktemp("envs"), workers=2) as running:
            yield running


@pytest.mark.slow
def test_an_env_over_http_steps_tests_finalizes_and_belongs_to_its_user(embedded):
    ann = solbench.connect(embedded.url, token=embedded.tokens["ann"])
    env = ann.make("vector_add", budget=Budget(evals=2, tests=1))
    assert env.problem_card.problem == "vector_add" and [w.uuid for w in env.problem_card.workloads] == [
        "n1000",
        "n4099",
    ]
    assert all(w.t_sol_ms > 0 and w.t_b_ms for w in env.problem_card.workloads)  # the reference timed by a worker

    tested = env.test(add_solution())
    assert tested.passed and tested.budget_left.tests == 0
    with pytest.raises(BudgetExhausted, match="1 of 1 tests used"):
        env.test(add_solution())
    with pytest.raises(InvalidCandidate, match="solution.definition"):
        env.step(add_solution(definition="rmsnorm"))  # refused at the door: nothing queued, nothing charged

    right = env.step(add_solution())
    assert right.info.correct and right.info.is_best and right.reward > 0 and right.info.candidate_id == 1
    wrong = env.step(add_solution(WRONG, name="wrong"))
    assert not wrong.info.correct and wrong.reward == 0 and wrong.done  # the last evaluation of the budget
    with pytest.raises(BudgetExhausted, match="2 of 2 evaluations used"):
        env.step(tagged("third"))

    state = env.state()
    assert [c["candidate_id"] for c in state["history"]] == [1, 2] and state["best"]["candidate_id"] == 1
    assert state["done"] and state["budget_left"]["evals"] == 0 and state["active_call"] is None
    assert env.best.candidate_id == 1 and env.budget_left.exhausted
    card = env.reset(seed=7)
    assert card.seed == 7 and card.budget_left.exhausted and len(env.history) == 2  # reset keeps the history

    final = env.finalize()
    assert final.candidate_id == 1 and final.correct and final.reward > 0

    with embedded.http("bob") as bob:  # another user: every call on ann's env is a 404, as for no env at all
        for method, path, body in (
            ("GET", f"/envs/{env.id}", None),
            ("POST", f"/envs/{env.id}/reset", {}),
            ("POST", f"/envs/{env.id}/step", {"solution": add_solution()}),
            ("POST", f"/envs/{env.id}/test", {"solution": add_solution()}),
            ("POST", f"/envs/{env.id}/finalize", None),
            ("GET", f"/envs/{env.id}/calls/1", None),
        ):
            answer = bob.request(method, path, json=body)
            assert answer.status_code == 404, (path, answer.text)
            assert answer.json()["detail"] in (f"env {env.id}: no such env", f"env {env.id}: no call 1")
    with pytest.raises(ServerRefused) as refused:
        solbench.connect(embedded.url, token=embedded.tokens["bob"]).env(env.id)
    assert refused.value.status == 404
    ann.close()


@pytest.mark.slow
def test_an_env_runs_one_call_at_a_time_and_a_pending_call_is_followed_to_its_answer(embedded):
    with embedded.http("ann") as ann:
        made = ann.post("/envs", json={"problem": "vector_add"}, params={"wait": 0})
        assert made.status_code in (201, 202)
        env_id = made.json()["id"] if made.status_code == 201 else made.json()["env"]
        first = ann.post(f"/envs/{env_id}/step", json={"solution": tagged("pending")}, params={"wait": 0})
        busy = ann.post(f"/envs/{env_id}/test", json={"solution": add_solution()}, params={"wait": 0})
        if made.status_code == 202:  # the card's call was still running: the step waited its turn too
            assert first.status_code == 409 and "is still queued or running" in first.json()["detail"]
            ann.get(made.json()["url"].removeprefix("/api/v1"), params={"wait": 60})
            first = ann.post(f"/envs/{env_id}/step", json={"solution": tagged("pending")}, params={"wait": 0})
            busy = ann.post(f"/envs/{env_id}/test", json={"solution": add_solution()}, params={"wait": 0})
        assert first.status_code == 202 and first.json()["kind"] == "step"
        assert busy.status_code == 409 and f"call {first.json()['id']} is still queued or running" in busy.text
        answer = ann.get(first.json()["url"].removeprefix("/api/v1"), params={"wait": 60})
        assert answer.status_code == 200 and answer.json()["info"]["correct"]
        assert answer.json()["solution"]["name"] == "pending"


@pytest.mark.slow
def test_eight_async_rollouts_share_one_server_and_each_gets_its_own_result(embedded):
    async def rollouts():
        service = solbench.connect(embedded.url, token=embedded.tokens["bob"])
        envs = await asyncio.gather(*(service.amake("vector_add", reward="gated_sol") for _ in range(8)))
        results = await asyncio.gather(*(env.astep(tagged(f"rollout-{i}")) for i, env in enumerate(envs)))
        states = await asyncio.gather(*(env.astate() for env in envs))
        await service.aclose()
        return envs, results, states

    envs, results, states = asyncio.run(rollouts())
    assert len({env.id for env in envs}) == 8
    assert [r.solution.name for r in results] == [f"rollout-{i}" for i in range(8)]
    assert all(r.info.correct and r.info.candidate_id == 1 and not r.info.cache_hit for r in results)
    assert all(r.reward_kind == "gated_sol" and r.reward > 0 for r in results)
    assert [s["history"][0]["solution"]["name"] for s in states] == [f"rollout-{i}" for i in range(8)]


@pytest.mark.slow
def test_an_env_over_http_runs_on_celery_workers(tmp_path, redis_server):
    with RunningService(tmp_path, workers=0, broker_url=redis_server.url) as running:
        worker = start_worker(
            redis_server.url, tmp_path / "worker.log", "--hardware", HARDWARE, "--device", "cpu", "--name", "w1@envs"
        )
        try:
            service = solbench.connect(running.url, token=running.tokens["ann"])
            env = service.make("vector_add", budget=Budget(evals=1))
            assert env.problem_card.device == "cpu" and len(env.problem_card.workloads) == 2
            result = env.step(add_solution())
            assert result.info.correct and result.done and result.reward > 0
            with pytest.raises(BudgetExhausted):
                env.step(tagged("over"))
            final = env.finalize()
            assert final.candidate_id == 1 and final.correct
            with running.service.session_factory() as session:
                from solbench.service.models import EnvCall

                workers = {call.worker for call in session.query(EnvCall)}
            assert workers == {"w1@envs"}  # every call ran on the Celery worker
            service.close()
        finally:
            worker.stop()


@pytest.mark.slow
def test_solbench_mcp_serves_a_remote_env_with_the_same_tools(embedded, tmp_path):
    import os
    import sys
    from pathlib import Path

    from mcp import Client, StdioServerParameters

    source = Path(__file__).resolve().parents[2] / "src"
    server = StdioServerParameters(
        command=sys.executable,
        cwd=str(tmp_path),
        args=[
            "-m",
            "solbench",
            "mcp",
            "--server",
            embedded.url,
            "--token",
            embedded.tokens["ann"],
            "--budget-evals",
            "1",
        ],
        env={"PYTHONPATH": os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")])},
    )

    async def session():
        async with Client(server, read_timeout_seconds=300) as client:
            listed = (await client.call_tool("list_problems", {})).structured_content
            card = (await client.call_tool("get_problem_card", {"problem": "vector_add"})).structured_content
            step = await client.call_tool("evaluate", {"problem": "vector_add", "solution": tagged("mcp")})
            over = await client.call_tool("evaluate", {"problem": "vector_add", "solution": tagged("mcp-2")})
            best = (await client.call_tool("best", {"problem": "vector_add"})).structured_content
            return listed, card, step, over, best

    listed, card, step, over, best = asyncio.run(asyncio.wait_for(session(), 300))
    assert listed == {"result": ["vector_add"]} and card["problem"] == "vector_add"
    assert not step.is_error, step.content
    assert step.structured_content["info"]["correct"] and step.structured_content["done"]
    assert over.is_error and "budget exhausted: 1 of 1 evaluations used" in over.content[0].text
    assert best["result"]["solution"]["name"] == "mcp"
