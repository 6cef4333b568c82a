"""The env API's door without workers (fast): ownership, validation, one call at a time, limits, and the state a
worker would resume from."""

from __future__ import annotations

import pytest

from servers import postgres_server, postgres_url  # noqa: F401 - fixtures, used as test parameters
from service.conftest import add_solution, fast_settings, settings_model


@pytest.fixture
def app(tmp_path):
    from fastapi.testclient import TestClient

    from solbench.service.app import create_app, prepare
    from solbench.service.auth import add_user

    limits = {"env_calls_per_hour": 7, "max_envs": 3, "max_queued_env_calls": 2, "max_waiting_env_requests": 2}
    service = prepare(settings_model(fast_settings(tmp_path, workers=0, limits=limits)))
    tokens = {name: add_user(service.session_factory, name).token for name in ("ann", "bob")}
    with TestClient(create_app(service, start_queue=False)) as client:
        yield client, {name: {"Authorization": f"Bearer {token}"} for name, token in tokens.items()}, service
    service.engine.dispose()


def test_an_env_is_its_makers_one_call_runs_at_a_time_and_bad_input_is_named(app):
    client, users, _ = app
    made = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add", "budget_evals": 3}, headers=users["ann"])
    assert made.status_code == 202 and made.json()["kind"] == "reset"  # no worker: the card's call waits
    env = made.json()["env"]
    for method, path in (
        ("GET", f"/api/v1/envs/{env}"),
        ("POST", f"/api/v1/envs/{env}/finalize?wait=0"),
        ("POST", f"/api/v1/envs/{env}/reset"),
        ("GET", made.json()["url"] + "?wait=0"),
    ):
        assert client.request(method, path, headers=users["bob"]).status_code == 404, path
    assert client.get(f"/api/v1/envs/{env}", headers=users["bob"]).status_code == 404
    assert client.get(f"/api/v1/envs/{env}").status_code == 401
    view = client.get(f"/api/v1/envs/{env}", headers=users["ann"]).json()
    assert view["card"] is None and view["active_call"]["kind"] == "reset" and view["budget_left"]["evals"] == 3

    busy = client.post(f"/api/v1/envs/{env}/step?wait=0", json={"solution": add_solution()}, headers=users["ann"])
    assert busy.status_code == 409 and "is still queued or running" in busy.json()["detail"]
    other = client.post(
        f"/api/v1/envs/{env}/step", json={"solution": add_solution(definition="rmsnorm")}, headers=users["ann"]
    )
    assert other.status_code == 422 and other.json()["field"] == "solution.definition"
    for body, field in (
        ({"problem": "nope"}, "problem"),
        ({"problem": "vector_add", "reward": "fastest"}, "reward"),
        ({"problem": "vector_add", "hardware": "B200"}, "hardware"),
        ({"problem": "vector_add", "budget_evals": -1}, "budget_evals"),
    ):
        refused = client.post("/api/v1/envs", json=body, headers=users["ann"])
        assert refused.status_code == 422 and refused.json()["field"] == field, refused.text


def test_env_calls_and_envs_are_rate_limited_per_user_and_the_limits_and_queue_are_published(app):
    from solbench.service.models import EnvCall

    client, users, service = app

    def make(user: str):
        return client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=users[user])

    def finish(call: int) -> None:
        with service.session_factory.begin() as session:  # as a worker leaves it
            session.get(EnvCall, call).status = "done"

    first, second = make("ann"), make("ann")
    assert (first.status_code, second.status_code) == (202, 202)
    status = client.get("/api/v1/status").json()["status"]
    assert (status["env_calls_queued"], status["env_calls_running"]) == (2, 0)
    flooding = make("ann")  # no more queued work than the cap, whichever env it is on
    assert flooding.status_code == 429 and flooding.headers["Retry-After"] == "30"
    assert flooding.json()["detail"] == (
        "env: 2 of your env calls are waiting or running (at most 2); retry when one finishes"
    )
    finish(first.json()["id"])
    third = make("ann")
    assert third.status_code == 202
    for call in (second, third):
        finish(call.json()["id"])
    fourth = make("ann")
    assert fourth.status_code == 429 and "Retry-After" not in fourth.headers  # no time frees one: finalizing does
    assert fourth.json()["detail"].startswith("env: 3 of your environments are not finalized (at most 3)")
    with service.session_factory.begin() as session:  # as the first env's finalize leaves it
        card_call = session.get(EnvCall, first.json()["id"])
        session.add(
            EnvCall(env_id=card_call.env_id, user_id=card_call.user_id, kind="finalize", status="done", attempts=1)
        )
    assert make("ann").status_code == 202
    assert make("bob").status_code == 202
    published = client.get("/api/v1/limits").json()
    assert {k: published[k] for k in ("env_calls_per_hour", "max_envs", "max_queued_env_calls")} == {
        "env_calls_per_hour": 7,
        "max_envs": 3,
        "max_queued_env_calls": 2,
    }


def test_a_users_waiting_requests_are_capped_before_anything_is_queued(app):
    import threading
    import time

    from solbench.service.models import EnvCall, User

    client, users, service = app
    made = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=users["ann"]).json()
    url = made["url"]
    with service.session_factory() as session:
        user = session.query(User).filter_by(name="ann").one()
    ann = user.id
    held = service.waiting.enter(user, 60.0)  # a request of ann's still waiting, as the app holds it
    waiter = threading.Thread(target=client.get, args=(url + "?wait=0.5",), kwargs={"headers": users["ann"]})
    with held:
        waiter.start()  # a real request waits for the call (no worker runs it) and holds the second slot
        deadline = time.monotonic() + 5
        while service.waiting.waiting(ann) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        refused = client.get(url + "?wait=5", headers=users["ann"])
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "1", refused.text  # the waiter's end
        assert refused.json()["detail"] == (
            "wait: 2 of your requests are waiting for env calls' answers (at most 2 at once); retry in 1 s, or ask "
            "with ?wait=0"
        )
        calls = client.post("/api/v1/envs", json={"problem": "vector_add"}, headers=users["ann"])
        assert calls.status_code == 429
        with service.session_factory() as session:  # refused before anything was made
            assert session.query(EnvCall).filter_by(user_id=ann).count() == 1
        assert client.get(url + "?wait=0", headers=users["ann"]).status_code == 202  # not waiting: no slot
        waiter.join(timeout=10)
    assert service.waiting.waiting(ann) == 0
    assert client.get(url + "?wait=0.05", headers=users["ann"]).status_code == 202
    assert client.get("/api/v1/limits").json()["max_waiting_env_requests"] == 2


def test_envs_untouched_past_the_retention_are_pruned_by_the_queues_reaper(app):
    import time
    from datetime import timedelta

    from solbench.service.embedded import EmbeddedQueue
    from solbench.service.env_retention import prune_old_envs
    from solbench.service.models import AgentEnv, EnvCall, utcnow

    client, users, service = app
    envs = []
    for name in ("old", "recent", "busy"):  # busy: its card's call still queued
        made = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=users["bob"]).json()
        envs.append(made["env"])
        if name != "busy":
            with service.session_factory.begin() as session:
                session.get(EnvCall, made["id"]).status = "done"
    old, recent, busy = envs
    with service.session_factory.begin() as session:
        for env, age in ((old, 31), (busy, 31), (recent, 29)):
            session.get(AgentEnv, env).updated_at = utcnow() - timedelta(days=age)
    assert prune_old_envs(service.session_factory, 30, now=utcnow() - timedelta(days=2)) == 0
    settings = service.settings.model_copy(update={"workers": 0, "stale_after_s": 2.0})
    queue = EmbeddedQueue(settings, service.session_factory)  # its reaper prunes at its first round
    try:
        deadline = time.monotonic() + 10
        while client.get(f"/api/v1/envs/{old}", headers=users["bob"]).status_code != 404:
            assert time.monotonic() < deadline, "the reaper did not prune the old env"
            time.sleep(0.05)
    finally:
        queue.close()
    with service.session_factory() as session:
        assert session.query(EnvCall).filter_by(env_id=old).count() == 0
        assert {env for (env,) in session.query(AgentEnv.id).filter(AgentEnv.id.in_([old, busy, recent]))} == {
            busy,
            recent,
        }


def test_a_spent_budget_is_refused_at_the_door_with_what_the_client_needs(app):
    from solbench.optimize import BudgetLeft, EnvState
    from solbench.service.models import AgentEnv, EnvCall

    client, users, service = app
    env = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add", "budget_evals": 1}, headers=users["ann"])
    env_id = env.json()["env"]
    with service.session_factory.begin() as session:  # as if the card's call and one step had run
        session.get(EnvCall, env.json()["id"]).status = "done"
        spent = EnvState(problem="vector_add", reward="sol", spent=BudgetLeft(evals_used=1))
        session.get(AgentEnv, env_id).state = spent.model_dump(mode="json")
    refused = client.post(f"/api/v1/envs/{env_id}/step", json={"solution": add_solution()}, headers=users["ann"])
    assert refused.status_code == 409 and refused.json()["error"] == "BudgetExhausted"
    assert refused.json()["arguments"] == {"kind": "evaluation", "used": "1 of 1 evaluations used"}
    tested = client.post(f"/api/v1/envs/{env_id}/test?wait=0", json={"solution": add_solution()}, headers=users["ann"])
    assert tested.status_code == 202  # tests are unlimited: queued for a worker


CALLERS = ("anonymous", "bad_token", "banned", "other", "owner", "admin")
ENV_ACCESS: dict[tuple[str, str], tuple[str, str, str, str, str, str]] = {
    #                                               anonymous bad   banned other  owner  admin
    ("POST", "/envs"): ("401", "401", "403", "202", "202", "202"),
    ("GET", "/envs/{env_id}"): ("401", "401", "403", "404", "200", "404"),
    ("POST", "/envs/{env_id}/reset"): ("401", "401", "403", "404", "409", "404"),
    ("POST", "/envs/{env_id}/step"): ("401", "401", "403", "404", "202", "404"),
    ("POST", "/envs/{env_id}/test"): ("401", "401", "403", "404", "202", "404"),
    ("POST", "/envs/{env_id}/finalize"): ("401", "401", "403", "404", "202", "404"),
    ("GET", "/envs/{env_id}/calls/{call_id}"): ("401", "401", "403", "404", "202", "404"),
}
"""Who may call each env route (tests/service/test_api_access.py's table counts these as ruled): an env is its
maker's alone, admins included, and another caller's or a missing one answers 404 alike. Owner calls that evaluate
answer 202 here only because no worker runs (`?wait=0`), and a reset 409 because no worker made the card."""


@pytest.fixture(scope="module")
def callers(tmp_path_factory):
    """A service without workers or tight limits, and a token per kind of caller."""
    from fastapi.testclient import TestClient

    from solbench.service.app import create_app, prepare
    from solbench.service.auth import add_user, set_banned

    limits = {"max_queued_env_calls": 1000}  # the owner's calls stay queued: no worker runs them
    service = prepare(settings_model(fast_settings(tmp_path_factory.mktemp("callers"), workers=0, limits=limits)))
    tokens = {name: add_user(service.session_factory, name).token for name in ("ann", "bob", "mallory")}
    set_banned(service.session_factory, "mallory")
    headers = {
        "anonymous": {},
        "bad_token": {"Authorization": "Bearer sb_not-a-token"},
        "banned": {"Authorization": f"Bearer {tokens['mallory']}"},
        "other": {"Authorization": f"Bearer {tokens['bob']}"},
        "owner": {"Authorization": f"Bearer {tokens['ann']}"},
        "admin": {"Authorization": f"Bearer {add_user(service.session_factory, 'root', admin=True).token}"},
    }
    with TestClient(create_app(service, start_queue=False)) as client:
        yield client, headers, service
    service.engine.dispose()


@pytest.mark.parametrize("route", list(ENV_ACCESS), ids=" ".join)
def test_each_caller_gets_what_the_env_table_says(callers, route):
    from solbench.service.models import EnvCall

    client, headers, service = callers
    for caller, expected in zip(CALLERS, ENV_ACCESS[route]):
        made = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=headers["owner"]).json()
        with service.session_factory.begin() as session:  # the card's call done, so that the next one may start
            session.get(EnvCall, made["id"]).status = "done"
        body = {"/envs": {"problem": "vector_add"}, "step": {"solution": add_solution()}, "reset": {}}.get(
            route[1].rsplit("/", 1)[-1] if route[1] != "/envs" else "/envs", {"solution": add_solution()}
        )
        path = route[1].format(env_id=made["env"], call_id=made["id"])
        if route[1].endswith("{call_id}"):  # a queued call, whose answer is still pending
            queued = client.post(f"/api/v1/envs/{made['env']}/test?wait=0", json=body, headers=headers["owner"])
            path = queued.json()["url"].removeprefix("/api/v1")
        sent = body if route[0] == "POST" and not route[1].endswith("finalize") else None
        answer = client.request(route[0], f"/api/v1{path}?wait=0", json=sent, headers=headers[caller])
        assert str(answer.status_code) == expected, (caller, answer.text[:300])


def test_a_stale_running_call_is_taken_over_only_while_it_has_tries_left(app):
    from datetime import timedelta

    from solbench.service.env_jobs import claim_env_call
    from solbench.service.jobs import WorkerInfo
    from solbench.service.models import EnvCall, utcnow

    client, users, service = app
    call = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=users["ann"]).json()["id"]
    worker, tries = WorkerInfo(name="w", hardware="local", device="cpu"), service.settings.max_attempts
    for attempts, claimed in ((tries - 1, True), (tries, False)):
        with service.session_factory.begin() as session:  # its worker stopped beating mid-call
            row = session.get(EnvCall, call)
            row.status, row.attempts, row.heartbeat_at = "running", attempts, utcnow() - timedelta(seconds=120)
        assert (claim_env_call(service.session_factory, call, worker, 60, tries) is not None) == claimed, attempts


def test_a_library_error_that_is_not_the_candidates_fault_keeps_its_own_name_and_status(app):
    import httpx

    from solbench.optimize import StateMismatch
    from solbench.service.agent_envs import Refusal
    from solbench.service.env_client import _answer
    from solbench.service.errors import ServerRefused
    from solbench.service.models import EnvCall

    client, users, service = app
    made = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=users["ann"]).json()
    with service.session_factory.begin() as session:  # as a worker stores it when the stored state is not the env's
        call = session.get(EnvCall, made["id"])
        call.status, call.refusal = "refused", Refusal.of(StateMismatch("rmsnorm/sol", "vector_add/sol")).as_json()
    answer = client.get(made["url"], headers=users["ann"])
    assert answer.status_code == 500 and (answer.json()["error"], answer.json()["field"]) == ("StateMismatch", "env")
    with pytest.raises(ServerRefused, match="resume: the snapshot is of rmsnorm/sol"):  # not InvalidCandidate
        _answer(httpx.Response(answer.status_code, json=answer.json()))


def test_the_openapi_schema_lists_every_status_the_env_calls_answer(app):
    """The 500 of `test_a_library_error_that_is_not_the_candidates_fault...` and the 202 of a pending call are
    documented on each route that can answer them."""
    client, _, _ = app
    paths = client.get("/api/v1/openapi.json").json()["paths"]
    for path in ("/api/v1/envs", "/api/v1/envs/{env_id}/step", "/api/v1/envs/{env_id}/test"):
        assert {"202", "404", "409", "422", "429", "500"} <= set(paths[path]["post"]["responses"]), path
    assert "500" in paths["/api/v1/envs/{env_id}/calls/{call_id}"]["get"]["responses"]


def test_a_failed_call_tells_its_caller_its_id_and_the_operator_the_infrastructures_reason(app, caplog):
    from datetime import timedelta

    from solbench.service.job_claims import requeue_stale_jobs
    from solbench.service.models import EnvCall, utcnow

    client, users, service = app
    made = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=users["ann"]).json()
    with service.session_factory.begin() as session:  # its last try's worker, on a host of the operator's, died
        call = session.get(EnvCall, made["id"])
        call.status, call.attempts, call.worker = "running", 3, "w1@gpu-7.internal"
        call.heartbeat_at = utcnow() - timedelta(seconds=120)
    with caplog.at_level("WARNING", logger="solbench.service.job_claims"):
        assert requeue_stale_jobs(service.session_factory, 60, max_attempts=3) == 1
    assert f"env call {made['id']} failed after 3 tries: worker w1@gpu-7.internal stopped answering" in caplog.text
    answer = client.get(made["url"], headers=users["ann"])
    assert answer.status_code == 502 and f"env call {made['id']} could not run" in answer.json()["detail"]
    assert "gpu-7" not in answer.text


def _run_queued_call(service, call_id: int) -> None:
    """The call run here by the workers' own code, as an embedded worker would."""
    from solbench.service.env_jobs import execute_env_call
    from solbench.service.jobs import WorkerInfo

    worker = WorkerInfo(name="door-test", hardware=service.settings.hardware, device="cpu")
    execute_env_call(service.session_factory, call_id, worker, settings=service.settings)


def test_a_tests_seed_and_workload_reach_the_library_which_names_a_workload_that_is_not_public(app):
    import httpx

    from solbench.optimize import UnknownWorkload
    from solbench.service.env_client import _answer
    from solbench.service.models import EnvCall

    client, users, service = app
    made = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=users["ann"]).json()
    with service.session_factory.begin() as session:  # the card's call done, so that the test may start
        session.get(EnvCall, made["id"]).status = "done"
    path = f"/api/v1/envs/{made['env']}/test?wait=0"
    for seed in (-1, 2**62):  # below 0 or beyond what the evaluator takes: refused at the door, never queued
        bad_seed = client.post(path, json={"solution": add_solution(), "seed": seed}, headers=users["ann"])
        assert bad_seed.status_code == 422 and bad_seed.json()["field"] == "seed", bad_seed.text
    body = {"solution": add_solution(), "seed": 5, "workload": "n5"}
    queued = client.post(path, json=body, headers=users["ann"]).json()
    with service.session_factory() as session:
        assert session.get(EnvCall, queued["id"]).arguments == {"seed": 5, "workload": "n5"}
    _run_queued_call(service, queued["id"])  # the library refuses it before anything runs
    answer = client.get(queued["url"], headers=users["ann"])
    assert answer.status_code == 422 and answer.json()["field"] == "workload", answer.text
    assert answer.json()["arguments"]["workload"] == "n5" and "n1000" in answer.json()["arguments"]["public"]
    with pytest.raises(UnknownWorkload, match="'n5' is not a public workload"):
        _answer(httpx.Response(answer.status_code, json=answer.json()))


def test_a_reset_waits_for_the_envs_call_keeps_what_it_wrote_and_counts_as_a_call(app):
    from solbench.optimize import BudgetLeft, EnvState
    from solbench.service.agent_envs import owned_env, reset_card
    from solbench.service.models import AgentEnv, User

    client, users, service = app
    made = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=users["ann"]).json()
    env = made["env"]
    busy = client.post(f"/api/v1/envs/{env}/reset", json={"seed": 1}, headers=users["ann"])
    assert busy.status_code == 409 and f"call {made['id']} is still queued or running" in busy.json()["detail"]
    _run_queued_call(service, made["id"])

    with service.session_factory() as session:  # a reset that read the env just before a step's worker stored it
        ann = session.query(User).filter_by(name="ann").one()
        row = owned_env(session, env, ann)
        assert row is not None and row.state is not None
        with service.session_factory.begin() as worker:
            stored = EnvState.model_validate(worker.get(AgentEnv, env).state)
            stepped = stored.model_copy(update={"spent": BudgetLeft(evals_used=1, seconds_used=0.5)})
            worker.get(AgentEnv, env).state = stepped.model_dump(mode="json")
        reset_card(session, row, seed=3)
        session.commit()
    with service.session_factory() as session:
        kept = EnvState.model_validate(session.get(AgentEnv, env).state)
    assert kept.spent.evals_used == 1 and kept.seed == 3  # the step's spending kept, the seed set

    answers = [client.post(f"/api/v1/envs/{env}/reset", json={}, headers=users["ann"]) for _ in range(6)]
    assert [a.status_code for a in answers] == [200, 200, 200, 200, 200, 429]  # the make, the reset above, 5 more
    assert "7 env calls per hour reached" in answers[-1].json()["detail"]


def test_an_env_is_finalized_once_and_its_answer_shows_nothing_of_the_held_out_inputs(app):
    from solbench.service.agent_envs import final_as_served
    from solbench.service.models import EnvCall

    client, users, service = app
    ann = users["ann"]
    made = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=ann).json()
    env = made["env"]
    _run_queued_call(service, made["id"])
    stepped = client.post(f"/api/v1/envs/{env}/step?wait=0", json={"solution": add_solution()}, headers=ann).json()
    _run_queued_call(service, stepped["id"])
    queued = client.post(f"/api/v1/envs/{env}/finalize?wait=0", headers=ann).json()
    _run_queued_call(service, queued["id"])

    final = client.get(queued["url"], headers=ann).json()
    assert final["candidate_id"] == 1 and final["correct"] and final["traces"] == []
    with service.session_factory() as session:
        stored = session.get(EnvCall, queued["id"]).result
        assert stored["traces"]  # the service keeps them
        calls = session.query(EnvCall).filter_by(env_id=env).count()
    printed = {"workload": "n4099", "status": "INCORRECT_NUMERICAL", "error": "x = tensor([0.37, -1.2, ...])"}
    held_out = final_as_served({**stored, "held_out": ["n4099"], "feedback": [printed]})  # with 2, none held out
    assert held_out["feedback"] == [{**printed, "error": None}] and held_out["traces"] == []
    again = client.post(f"/api/v1/envs/{env}/finalize?wait=0", headers=ann)
    assert again.status_code == 200 and again.json() == final  # the first one's result: nothing measured again
    for call in ("step", "test"):
        refused = client.post(f"/api/v1/envs/{env}/{call}?wait=0", json={"solution": add_solution()}, headers=ann)
        assert refused.status_code == 409 and f"env {env}: finalized (call {queued['id']})" in refused.text
    with service.session_factory() as session:
        assert session.query(EnvCall).filter_by(env_id=env).count() == calls  # nothing queued
    view = client.get(f"/api/v1/envs/{env}", headers=ann).json()
    assert view["finalized"] and view["done"]


@pytest.mark.slow
def test_a_call_queued_while_its_env_is_pruned_is_refused_not_answered_and_then_deleted(tmp_path, postgres_url):
    """On PostgreSQL a request runs beside the pruner: a step queued between the pruner's choice of an env and its
    deletes must wait and find the env gone (404), never be answered 202 for a call the pruner then deletes."""
    import threading
    from datetime import timedelta

    from fastapi.testclient import TestClient
    from sqlalchemy import event

    from solbench.service.app import create_app, prepare
    from solbench.service.auth import add_user
    from solbench.service.env_retention import prune_old_envs
    from solbench.service.models import AgentEnv, EnvCall, utcnow

    service = prepare(settings_model(fast_settings(tmp_path, workers=0, db_url=postgres_url)))
    headers = {"Authorization": f"Bearer {add_user(service.session_factory, 'ann').token}"}
    answers = []
    with TestClient(create_app(service, start_queue=False)) as client:
        made = client.post("/api/v1/envs?wait=0", json={"problem": "vector_add"}, headers=headers).json()
        env = made["env"]
        with service.session_factory.begin() as session:
            session.get(EnvCall, made["id"]).status = "done"
            session.get(AgentEnv, env).updated_at = utcnow() - timedelta(days=31)

        def step() -> None:
            body = {"solution": add_solution()}
            answers.append(client.post(f"/api/v1/envs/{env}/step?wait=0", json=body, headers=headers))

        def user_comes_back(conn, cursor, statement, *args) -> None:
            if statement.startswith("DELETE FROM env_calls") and not answers:
                stepping = threading.Thread(target=step)
                stepping.start()
                stepping.join(timeout=2.0)  # answered by now unless the pruner's lock holds it back

        event.listen(service.engine, "before_cursor_execute", user_comes_back)
        try:
            prune_old_envs(service.session_factory, 30)
        finally:
            event.remove(service.engine, "before_cursor_execute", user_comes_back)
        deadline = threading.Event()
        for _ in range(100):  # the step, held back, answers once the pruner committed
            if answers:
                break
            deadline.wait(0.05)
        (answer,) = answers
        with service.session_factory() as session:
            queued = session.query(EnvCall).filter_by(env_id=env, kind="step").count()
        assert (answer.status_code, queued) in ((404, 0), (202, 1)), (answer.status_code, answer.text, queued)
    service.engine.dispose()
