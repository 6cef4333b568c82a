"""The API over real HTTP against `solbench serve` (SQLite in tmp_path, one embedded worker)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from service.conftest import ADD, add_solution
from solbench.service.models import Result, Submission

pytestmark = pytest.mark.slow

BLOCKED = "import torch, time\ntime.perf_counter = lambda: 0.0\n\ndef run(x, y):\n    return x + y\n"


def _count(server, model=Submission) -> int:
    with server.session_factory()() as session:
        return session.scalar(select(func.count()).select_from(model))


def _cancel(client, *responses) -> None:
    """Delete what a test submitted, so the one worker does not evaluate it while later tests wait."""
    for response in responses:
        assert client.delete(f"/submissions/{response.json()['id']}").status_code == 200


def _post(client, body: dict, **headers):
    return client.post("/submissions", json=body, headers=headers)


def test_a_submission_goes_from_queued_to_done_with_one_result_and_a_score(live_server):
    token = live_server.add_user("runner")
    with live_server.client(token) as client:
        accepted = _post(client, {"problem": "vector_add", "solution": add_solution(), "mode": "ranked"})
        assert accepted.status_code == 202, accepted.text
        body = accepted.json()
        assert body["status"] in ("queued", "running") and body["queue_position"] >= 0
        view = live_server.wait_done(token, body["id"])
        assert view["status"] == "done", view
        assert view["created_at"].endswith("Z") and view["finished_at"] >= view["created_at"]
        result = view["result"]
        assert result["verdict"] == "PASSED" and 0 < result["score"] <= 1
        assert result["hardware"] == "H100_SXM" and result["harness_version"] and result["held_out_workloads"] == 1
        assert [t["workload"]["uuid"] for t in result["traces"]] == ["n1000", "n4099"]  # held-out ones never served
        assert result["traces"][0]["evaluation"]["solbench"]["timing"]["samples_ms"]
        assert set(result["t_sol_ms"]) == {"n1000", "n4099"}
        with live_server.session_factory()() as session:
            assert (
                session.scalar(select(func.count()).select_from(Result).where(Result.submission_id == body["id"])) == 1
            )
        board = client.get("/leaderboards/L1/vector_add").json()
        assert board["entries"][0]["user"] == "runner" and board["firsts"]
        assert client.get("/leaderboards/L1").json()["rows"][0]["user"] == "runner"
        assert client.get("/users/runner").json()["best"][0]["problem"] == "vector_add"
        status = client.get("/status").json()
        assert status["status"]["workers"][0]["hardware"] == "H100_SXM"

        # The bundle holds the solution, the problem version and the traces with raw samples.
        bundle = client.get(f"/submissions/{body['id']}/bundle").json()
        assert bundle["format"] == "solbench-bundle/1" and bundle["solution"]["sources"]
        assert [w["uuid"] for w in bundle["problem"]["workloads"]] == ["n1000", "n4099"]
    # A ranked submission is public, but its code is its owner's.
    with live_server.client(live_server.add_user("rival")) as rival:
        seen = rival.get(f"/submissions/{body['id']}").json()
        assert seen["result"]["score"] == result["score"] and seen["solution"] is None
        assert rival.get(f"/submissions/{body['id']}/bundle").status_code == 403


def test_requests_without_a_valid_token_are_refused(live_server):
    with live_server.client() as anonymous:
        response = _post(anonymous, {"problem": "vector_add", "solution": add_solution()})
        assert response.status_code == 401 and "Bearer" in response.json()["detail"]
        assert response.headers["WWW-Authenticate"] == "Bearer"
    with live_server.client("sb_not-a-token") as wrong:
        assert _post(wrong, {"problem": "vector_add", "solution": add_solution()}).status_code == 401


def test_private_submissions_are_readable_and_deletable_by_their_owner_and_admins_only(live_server):
    owner, other = live_server.add_user("owner"), live_server.add_user("other")
    admin = live_server.add_user("boss", admin=True)
    with live_server.client(owner) as client:
        first = _post(client, {"problem": "vector_add", "solution": add_solution(), "mode": "private"}).json()["id"]
        second = _post(client, {"problem": "vector_add", "solution": add_solution(), "mode": "test"}).json()["id"]
        assert client.get(f"/submissions/{first}").status_code == 200
    with live_server.client(other) as client:  # to others it does not exist
        assert client.get(f"/submissions/{first}").status_code == 404
        assert client.get(f"/submissions/{first}/bundle").status_code == 404
        assert client.delete(f"/submissions/{first}").status_code == 404
    with live_server.client() as anonymous:
        assert anonymous.get(f"/submissions/{first}").status_code == 404
    with live_server.client(admin) as client:
        assert client.get(f"/submissions/{second}").json()["user"] == "owner"
        assert client.get(f"/submissions/{first}").status_code == 200
        assert client.delete(f"/submissions/{second}").json() == {"id": second, "deleted": True}
        assert client.get(f"/submissions/{second}").status_code == 404
    with live_server.client(owner) as client:
        assert client.delete(f"/submissions/{first}").status_code == 200
        assert client.get(f"/submissions/{first}").status_code == 404


@pytest.mark.parametrize(
    "body, status, field",
    [
        ({"problem": "no_such_problem", "solution": add_solution()}, 422, "problem"),
        ({"problem": "vector_add", "solution": {**add_solution(), "sources": []}}, 422, "solution.sources"),
        (
            {
                "problem": "vector_add",
                "solution": {**add_solution(), "spec": {"languages": ["pytorch"], "entry_point": "kernel.py"}},
            },
            422,
            "solution.spec.entry_point",
        ),
        ({"problem": "vector_add", "solution": add_solution(definition="other")}, 422, "solution.definition"),
        ({"problem": "vector_add", "solution": add_solution(BLOCKED)}, 422, "solution.sources[0].content"),
        ({"problem": "vector_add", "solution": add_solution(), "mode": "fast"}, 422, "mode"),
        ({"problem": "vector_add"}, 422, "solution"),
        ({"problem": "vector_add", "solution": add_solution("x = 1\n" * 20000)}, 413, "body"),
    ],
)
def test_bad_payloads_are_refused_naming_the_field_and_nothing_is_stored(live_server, body, status, field):
    token = live_server.add_user("careless")
    before = _count(live_server)
    with live_server.client(token) as client:
        response = _post(client, body)
    assert response.status_code == status, response.text
    assert response.json()["field"] == field and response.json()["detail"].startswith(field)
    assert _count(live_server) == before


def test_a_body_far_over_the_limit_gets_a_413_that_a_client_sending_it_whole_reads(live_server):
    """urllib sends `Connection: close` and all of its body before it reads: 20 MB against `solbench serve`'s 64 KiB
    limit was a connection reset (tests/service/test_body_limit.py tries the other clients). The limit is published."""
    import urllib.error
    import urllib.request

    token = live_server.add_user("bulky")
    with live_server.client() as client:
        assert client.get("/limits").json()["max_body_bytes"] == 64 * 1024
    request = urllib.request.Request(
        live_server.url + "/api/v1/submissions",
        data=b"x" * (20 * 1024 * 1024),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 413
    assert json.loads(refused.value.read())["detail"] == "body: 20971520 bytes is over the limit of 65536 bytes"


def test_a_repeated_idempotency_key_returns_the_first_submission(live_server):
    token = live_server.add_user("retrier")
    body = {"problem": "vector_add", "solution": add_solution(), "mode": "private"}
    with live_server.client(token) as client:
        first = _post(client, body, **{"Idempotency-Key": "abc-1"})
        again = _post(client, body, **{"Idempotency-Key": "abc-1"})
        other = _post(client, body, **{"Idempotency-Key": "abc-2"})
        _cancel(client, first, other)
    assert first.json()["id"] == again.json()["id"] != other.json()["id"]
    assert again.headers["Idempotent-Replayed"] == "true"


def test_the_hourly_limit_per_mode_answers_429_with_retry_after(live_server):
    token = live_server.add_user("eager")
    body = {"problem": "vector_add", "solution": add_solution(), "mode": "test"}
    with live_server.client(token) as client:
        accepted = [_post(client, body) for _ in range(3)]
        refused = _post(client, body)
        private = _post(client, {**body, "mode": "private"})  # another mode has its own count
        _cancel(client, *accepted, private)
    statuses = [response.status_code for response in accepted]
    assert statuses == [202, 202, 202]
    assert refused.status_code == 429 and 3000 < int(refused.headers["Retry-After"]) <= 3600
    assert "per hour" in refused.json()["detail"]
    assert private.status_code == 202


def test_problems_list_their_public_workloads_with_t_sol_and_the_openapi_schema_is_served(live_server):
    with live_server.client() as client:
        assert [p["name"] for p in client.get("/problems").json()] == ["vector_add"]
        problem = client.get("/problems/vector_add").json()
        schema = client.get("/openapi.json").json()
        assert client.get("/problems/nope").status_code == 404
    assert [w["uuid"] for w in problem["per_workload"]] == ["n1000", "n4099"]
    assert all(w["t_sol_ms"] > 0 for w in problem["per_workload"]) and problem["hardware"] == "H100_SXM"
    assert "held" not in json.dumps(problem)
    assert {"/api/v1/submissions", "/api/v1/leaderboards/{set_name}", "/api/v1/status"} <= set(schema["paths"])


def test_solbench_submit_and_status_talk_to_the_server(live_server):
    token = live_server.add_user("cli-user")
    solution = live_server.root / "add.json"
    solution.write_text(json.dumps(add_solution(ADD)))
    env = {"SOLBENCH_TOKEN": token}
    done = live_server.cli(
        "submit",
        str(solution),
        "--problem",
        "vector_add",
        "--server",
        live_server.url,
        "--mode",
        "test",
        "--wait",
        "--json",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert view["status"] == "done" and view["result"]["verdict"] == "PASSED" and view["result"]["score"] is None
    shown = live_server.cli("status", str(view["id"]), "--server", live_server.url, env=env)
    assert shown.returncode == 0 and "done, PASSED" in shown.stdout
    refused = live_server.cli("submit", str(solution), "--problem", "nope", "--server", live_server.url, env=env)
    assert refused.returncode == 2 and "problem: unknown problem" in refused.stderr
    tokenless = live_server.cli("submit", str(solution), "--server", live_server.url, env={"SOLBENCH_TOKEN": ""})
    assert tokenless.returncode == 2 and "--token" in tokenless.stderr


def test_admin_commands_make_revoke_and_ban_accounts(live_server):
    settings = ["--settings", str(live_server.settings_file)]
    made = live_server.cli("admin", "add-user", "dora", *settings)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    with live_server.client(token) as client:
        assert client.get("/status").status_code == 200
        assert _post(client, {"problem": "nope", "solution": add_solution()}).status_code == 422  # authenticated
    assert live_server.cli("admin", "revoke-token", "dora", *settings).returncode == 0
    with live_server.client(token) as client:
        assert _post(client, {"problem": "nope", "solution": add_solution()}).status_code == 401
    unknown = live_server.cli("admin", "ban", "nobody", *settings)
    assert unknown.returncode == 2 and "no such user" in unknown.stderr


def test_a_banned_user_is_refused(live_server):
    from solbench.service.auth import set_banned

    token = live_server.add_user("mallory")
    set_banned(live_server.session_factory(), "mallory")
    with live_server.client(token) as client:
        response = _post(client, {"problem": "vector_add", "solution": add_solution()})
    assert response.status_code == 403 and "banned" in response.json()["detail"]
