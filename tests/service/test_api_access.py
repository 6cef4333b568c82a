"""Who may call which /api/v1 route, in process (fast tier): one table of every route, called by every kind of caller.

ACCESS holds one entry per route (method, path template) with one Rule per target its path can name (a submission
of each mode, a user, a problem, something that does not exist), and the expected answer for each caller:
anonymous, an unknown token, a banned user, another user (an ordinary one who is not the owner),
the owner (None where nothing is owned) and an admin. An answer is a status code and, after it, what the body must
show: `code` (the solution and its hash), `no code` (neither, nor any of the source text), `hidden` (exactly the
answer for a submission that does not exist, with no field of the hidden one), `ranked` / `all` (a listing names
only ranked submissions / private or test ones too), `public` (the public workloads, never a held-out one).

The rules it encodes (api/deps.py, api/submissions.py, queries.user_page): routes that name a caller answer a bad
token 401 and a banned user 403; writes need a token (401 without one); a test or private submission is its owner's
and admins' and to anyone else answers 404 as if it did not exist; a deleted one is 404 to everyone; a ranked one is
public, its code hidden from others until its set is frozen (bundle: 403), unless it is hacked (then it is its
owner's and admins' as a private one is); only the owner or an admin deletes one; a banned user's page is the
admins'; the /admin routes are the admins' (403 to other users). Routes that never name a caller (problems,
leaderboards, status) ignore the Authorization header, so a bad token or a banned user still reads them; the OpenAPI
schema and its docs page are public by design (they describe the API, hold no data). A route missing from ACCESS,
or an entry whose route is gone, fails `test_every_api_route_has_access_rules`; the agent-env routes have their
table beside their other door tests (test_envs_door.ENV_ACCESS), counted here. Writes run on a service of their own
(`mutable`, with tight limits), each case on a fresh copy of its target; the reads only add a banned user and three
copies of a submission (one of them flagged hacked) to the module's shared sample (`prepare_targets`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from sqlalchemy import func, select

from conftest import solution_dict
from service.conftest import InProcessService
from service.test_envs_door import ENV_ACCESS
from solbench.service.app import API_PREFIX
from solbench.service.models import ProblemVersion, Submission, utcnow

READERS = ("anonymous", "bad_token", "banned", "other", "owner", "admin")
BAD_TOKEN = "sb_not-a-token"
MISSING_ID = 999999
PROBLEM = "vector_add_fp32"
ADD = "import torch\n\ndef run(x, y):\n    return x + y\n"
LIMITS = {"max_body_bytes": 16 * 1024, "per_hour": {"test": 2, "private": 30, "ranked": 10}, "max_queued": 3}
"""The mutable service's limits: tight enough to reach in a few requests."""


@dataclass(frozen=True)
class Rule:
    """The expected answer of one route naming `target`, per caller (None: no such caller)."""

    target: str
    anonymous: str
    bad_token: str
    banned: str
    other: str
    owner: str | None
    admin: str


SUBMISSION, BUNDLE = "/submissions/{submission_id}", "/submissions/{submission_id}/bundle"
ACCESS: dict[tuple[str, str], tuple[Rule, ...]] = {
    #        target                       anonymous      bad    banned other user     owner       admin
    #                                                     token
    ("GET", SUBMISSION): (
        Rule("private submission", "404 hidden", "401", "403", "404 hidden", "200 code", "200 code"),
        Rule("test submission", "404 hidden", "401", "403", "404 hidden", "200 code", "200 code"),
        Rule("open ranked submission", "200 no code", "401", "403", "200 no code", "200 code", "200 code"),
        Rule("frozen ranked submission", "200 code", "401", "403", "200 code", "200 code", "200 code"),
        Rule("hacked ranked submission", "404 hidden", "401", "403", "404 hidden", "200 code", "200 code"),
        Rule("deleted submission", "404", "401", "403", "404", "404", "404"),
        Rule("no submission", "404", "401", "403", "404", None, "404"),
    ),
    ("GET", BUNDLE): (
        Rule("private submission", "404 hidden", "401", "403", "404 hidden", "200 code", "200 code"),
        Rule("test submission", "404 hidden", "401", "403", "404 hidden", "200 code", "200 code"),
        Rule("open ranked submission", "403", "401", "403", "403", "200 code", "200 code"),
        Rule("frozen ranked submission", "200 code", "401", "403", "200 code", "200 code", "200 code"),
        Rule("hacked ranked submission", "404 hidden", "401", "403", "404 hidden", "200 code", "200 code"),
        Rule("deleted submission", "404", "401", "403", "404", "404", "404"),
        Rule("no submission", "404", "401", "403", "404", None, "404"),
    ),
    ("DELETE", SUBMISSION): (
        Rule("private submission", "401", "401", "403", "404 hidden", "200", "200"),
        Rule("test submission", "401", "401", "403", "404 hidden", "200", "200"),
        Rule("open ranked submission", "401", "401", "403", "403", "200", "200"),
        Rule("frozen ranked submission", "401", "401", "403", "403", "200", "200"),
        Rule("deleted submission", "401", "401", "403", "404", "404", "404"),
        Rule("no submission", "401", "401", "403", "404", None, "404"),
    ),
    ("POST", "/submissions"): (
        Rule("a problem", "401", "401", "403", "202", None, "202"),
        Rule("no problem", "401", "401", "403", "422", None, "422"),
    ),
    ("GET", "/users/{name}"): (
        Rule("user", "200 ranked", "401", "403", "200 ranked", "200 all", "200 all"),
        Rule("banned user", "404", "401", "403", "404", "403", "200"),
        Rule("no user", "404", "401", "403", "404", None, "404"),
    ),
    ("GET", "/problems"): (Rule("none", "200", "200", "200", "200", None, "200"),),
    ("GET", "/problems/{name}"): (
        Rule("problem", "200 public", "200", "200", "200 public", None, "200 public"),
        Rule("no problem", "404", "404", "404", "404", None, "404"),
    ),
    ("GET", "/leaderboards"): (Rule("none", "200", "200", "200", "200", None, "200"),),
    ("GET", "/leaderboards/{set_name}"): (
        Rule("set", "200", "200", "200", "200", None, "200"),
        Rule("no set", "404", "404", "404", "404", None, "404"),
    ),
    ("GET", "/leaderboards/{set_name}/{problem}"): (
        Rule("set problem", "200 ranked", "200", "200", "200 ranked", None, "200 ranked"),
        Rule("problem of another set", "404", "404", "404", "404", None, "404"),
    ),
    ("GET", "/status"): (Rule("none", "200", "200", "200", "200", None, "200"),),
    ("GET", "/limits"): (Rule("none", "200", "200", "200", "200", None, "200"),),
    ("GET", "/admin/flagged"): (Rule("none", "401", "401", "403", "403", None, "200"),),
    ("GET", "/openapi.json"): (Rule("none", "200", "200", "200", "200", None, "200"),),
    ("GET", "/docs"): (Rule("none", "200", "200", "200", "200", None, "200"),),
}
"""(method, path under /api/v1) -> its rules. A new route needs an entry here."""


@dataclass(frozen=True)
class Target:
    """What a rule's target names in one service: path parameters, its owner, the submission (if one)."""

    params: dict[str, str]
    owner: str | None = None
    submission_id: int | None = None


def api_routes(app) -> set[tuple[str, str]]:
    """(method, path under /api/v1) of every route the app serves there. HEAD, which Starlette adds to a plain GET
    route, is that GET without its body and is not listed."""
    try:  # FastAPI 0.16x keeps an included router nested in app.routes; this walks it
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI: app.routes is already flat
        routes = list(app.routes)
    else:
        routes = list(iter_route_contexts(app.routes))
    return {
        (method, route.path.removeprefix(API_PREFIX))
        for route in routes
        if (getattr(route, "path", None) or "").startswith(API_PREFIX + "/")
        for method in (getattr(route, "methods", None) or ())
        if method != "HEAD"
    }


def add_submission(app: InProcessService, like: int, *, mode: str | None = None, deleted: bool = False) -> int:
    """A new submission row copying `like` (owner, problem version, solution, status, time), without a result."""
    with app.service.session_factory.begin() as session:
        original = session.get(Submission, like)
        row = Submission(
            user_id=original.user_id,
            problem_version_id=original.problem_version_id,
            mode=mode or original.mode,
            status=original.status,
            solution=original.solution,
            code_hash=original.code_hash,
            created_at=original.created_at,
            attempts=original.attempts,
            deleted_at=utcnow() if deleted else None,
        )
        session.add(row)
        session.flush()
        return row.id


def hacked_copy(app: InProcessService, like: int) -> int:
    """A copy of the ranked submission `like` that an admin flagged hacked."""
    from solbench.service.hacked import flag

    copy = add_submission(app, like)
    flag(app.service.session_factory, copy, "replays its output", "root")
    return copy


def prepare_targets(app: InProcessService) -> dict[str, Target]:
    """The targets of ACCESS in `app`'s sample, adding what the sample lacks: a banned user (mallory), a test and a
    deleted submission of alice's (copies of her private one), a hacked copy of bob's open ranked one."""
    from solbench.service.auth import add_user, set_banned

    sample = app.sample
    sample.tokens["mallory"] = add_user(app.service.session_factory, "mallory").token
    set_banned(app.service.session_factory, "mallory")

    def submission(submission_id: int) -> Target:
        with app.service.session_factory() as session:
            owner = session.get(Submission, submission_id).user.name
        return Target({"submission_id": str(submission_id)}, owner, submission_id)

    return {
        "private submission": submission(sample.private_submission),
        "test submission": submission(add_submission(app, sample.private_submission, mode="test")),
        "open ranked submission": submission(sample.open_set_submission),
        "frozen ranked submission": submission(sample.frozen_set_submission),
        "hacked ranked submission": submission(hacked_copy(app, sample.open_set_submission)),
        "deleted submission": submission(add_submission(app, sample.private_submission, deleted=True)),
        "no submission": Target({"submission_id": str(MISSING_ID)}),
        "a problem": Target({}),
        "no problem": Target({"name": "no_such_problem"}),
        "user": Target({"name": "alice"}, "alice"),
        "banned user": Target({"name": "mallory"}, "mallory"),
        "no user": Target({"name": "nobody"}),
        "problem": Target({"name": PROBLEM}),
        "set": Target({"set_name": "L2"}),
        "no set": Target({"set_name": "L9"}),
        "set problem": Target({"set_name": "L2", "problem": "gemm_bf16_4096"}),
        "problem of another set": Target({"set_name": "L2", "problem": PROBLEM}),
        "none": Target({}),
    }


def token_of(app: InProcessService, reader: str, target: Target) -> str | None:
    if reader == "anonymous":
        return None
    if reader == "bad_token":
        return BAD_TOKEN
    if reader == "admin":
        return app.admin
    name = {"banned": "mallory", "owner": target.owner}.get(reader, "dave" if target.owner == "carol" else "carol")
    return app.sample.tokens[name]


def call(app: InProcessService, method: str, path: str, token: str | None, **options):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return app.client.request(method, API_PREFIX + path, headers=headers, **options)


def cases(*methods: str) -> list:
    return [
        pytest.param(route, rule, reader, id=f"{route[0]} {route[1]} | {rule.target} | {reader}")
        for route, rules in ACCESS.items()
        if route[0] in methods
        for rule in rules
        for reader in READERS
        if getattr(rule, reader) is not None
    ]


def check(
    app: InProcessService, response, outcome: str, route: tuple[str, str], target: Target, token: str | None
) -> None:
    """`response` is `outcome` (a status, then what its body must show: see the module docstring)."""
    status, _, shows = outcome.partition(" ")
    assert response.status_code == int(status), f"expected {outcome}: {response.status_code} {response.text[:300]}"
    body = response.json() if "json" in response.headers.get("content-type", "") else None
    if shows == "hidden":
        missing = call(app, route[0], route[1].format(submission_id=MISSING_ID), token)
        assert response.json() == {
            "detail": missing.json()["detail"].replace(str(MISSING_ID), str(target.submission_id))
        }
        with app.service.session_factory() as session:
            row = session.get(Submission, target.submission_id)
            secrets = [
                row.user.name,
                row.problem_version.problem.name,
                row.code_hash,
                row.solution["name"],
                row.solution["sources"][0]["content"],
                row.mode,
            ]
        assert not [s for s in secrets if s in response.text], response.text
    elif shows == "code":
        assert body["solution"]["sources"], body
        assert "code_hash" not in body or body["code_hash"], body  # a bundle has no code_hash field
    elif shows == "no code":
        assert body["solution"] is None and body["code_hash"] is None
        with app.service.session_factory() as session:
            source = session.get(Submission, target.submission_id).solution["sources"][0]["content"]
        assert source not in response.text
    elif shows in ("ranked", "all"):
        modes = listed_modes(app, body)
        assert modes, body
        assert (set(modes.values()) == {"ranked"}) == (shows == "ranked"), modes
    elif shows == "public":
        with app.service.session_factory() as session:
            version = session.scalar(select(ProblemVersion).where(ProblemVersion.version_hash == body["version"]))
            public, held_out = [w["uuid"] for w in version.workloads], [w["uuid"] for w in version.held_out]
        assert [w["uuid"] for w in body["workloads"]] == public and held_out
        assert not [uuid for uuid in held_out if uuid in response.text]
    else:
        assert not shows, f"unknown outcome {outcome!r}"


def listed_modes(app: InProcessService, body) -> dict[int, str]:
    """Submission id -> mode of every submission a listing names (user page, leaderboard)."""
    ids = set()

    def walk(value) -> None:
        if isinstance(value, dict):
            if "submission_id" in value:  # a leaderboard entry, a best score
                ids.add(value["submission_id"])
            if "mode" in value and "id" in value:  # a listed submission
                ids.add(value["id"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body)
    with app.service.session_factory() as session:
        return dict(session.execute(select(Submission.id, Submission.mode).where(Submission.id.in_(ids))).all())


@pytest.fixture(scope="module")
def readable(in_process_service):
    return in_process_service, prepare_targets(in_process_service)


@pytest.fixture(scope="module")
def mutable(tmp_path_factory):
    """A service of its own for the writes, with tight limits (LIMITS)."""
    app = InProcessService(tmp_path_factory.mktemp("mutable"), limits=LIMITS)
    with app.client:
        yield app, prepare_targets(app)
    app.close()


def test_every_api_route_has_access_rules(in_process_service):
    served = api_routes(in_process_service.client.app)
    assert ("GET", SUBMISSION) in served and ("POST", "/submissions") in served, served  # the walk found them
    unruled = sorted(served - ACCESS.keys() - ENV_ACCESS.keys())
    assert not unruled, f"routes under {API_PREFIX} without access rules: add them to ACCESS here: {unruled}"
    gone = sorted((ACCESS.keys() | ENV_ACCESS.keys()) - served)
    assert not gone, f"ACCESS names routes the app no longer serves: {gone}"
    assert {method for method, _ in ACCESS} <= {"GET", "POST", "DELETE"}, "a method no test below calls"


@pytest.mark.parametrize(("route", "rule", "reader"), cases("GET"))
def test_each_caller_reads_what_the_table_says(readable, route, rule, reader):
    app, targets = readable
    target = targets[rule.target]
    token = token_of(app, reader, target)
    check(app, call(app, "GET", route[1].format(**target.params), token), getattr(rule, reader), route, target, token)


@pytest.mark.parametrize(("route", "rule", "reader"), cases("DELETE"))
def test_only_the_owner_or_an_admin_deletes_and_a_refusal_changes_nothing(mutable, route, rule, reader):
    app, targets = mutable
    target = targets[rule.target]
    if target.submission_id is not None and rule.target != "deleted submission":  # each case deletes its own
        fresh = add_submission(app, target.submission_id)
        target = Target({"submission_id": str(fresh)}, target.owner, fresh)
    token = token_of(app, reader, target)
    before = _row(app, target.submission_id)
    response = call(app, "DELETE", route[1].format(**target.params), token)
    outcome = getattr(rule, reader)
    check(app, response, outcome, route, target, token)
    after = _row(app, target.submission_id)
    if outcome == "200":
        assert after[0] is not None and response.json() == {"id": target.submission_id, "deleted": True}
        assert call(app, "GET", route[1].format(**target.params), app.admin).status_code == 404
    else:
        assert after == before, "a refused delete changed the submission"


@pytest.mark.parametrize(("route", "rule", "reader"), cases("POST"))
def test_only_a_signed_in_user_submits_and_a_refusal_stores_nothing(mutable, route, rule, reader):
    app, targets = mutable
    target = targets[rule.target]
    token = token_of(app, reader, target)
    problem = target.params.get("name", PROBLEM)
    before = _count(app)
    response = call(
        app,
        "POST",
        route[1],
        token,
        json={"problem": problem, "mode": "private", "solution": solution_dict(ADD, definition=problem)},
    )
    outcome = getattr(rule, reader)
    check(app, response, outcome, route, target, token)
    assert _count(app) == before + (outcome == "202")
    if outcome == "202":
        assert call(app, "GET", response.headers["Location"].removeprefix(API_PREFIX), token).status_code == 200


def test_a_user_over_the_hourly_limit_gets_429_saying_which_limit_and_when_to_retry(mutable):
    from solbench.service.auth import add_user

    app, _ = mutable
    token = add_user(app.service.session_factory, "hasty").token
    allowed = LIMITS["per_hour"]["test"]
    for _ in range(allowed):
        assert _submit(app, token, "test").status_code == 202
    before = _count(app)
    refused = _submit(app, token, "test")
    assert refused.status_code == 429, refused.text
    assert re.fullmatch(
        rf"mode: {allowed} test submissions per hour reached; retry in \d+ s", refused.json()["detail"]
    ), refused.json()
    assert 0 < int(refused.headers["Retry-After"]) <= 3600 and _count(app) == before
    assert _submit(app, token, "private").status_code == 202  # the limit is per mode
    assert all(_submit(app, app.admin, "test").status_code == 202 for _ in range(allowed + 1))  # admins: none


def test_a_user_with_a_full_queue_gets_429_until_one_of_theirs_leaves_it(mutable):
    from solbench.service.auth import add_user

    app, _ = mutable
    token = add_user(app.service.session_factory, "eager").token
    accepted = [_submit(app, token, "private") for _ in range(LIMITS["max_queued"])]
    assert [r.status_code for r in accepted] == [202] * LIMITS["max_queued"]
    refused = _submit(app, token, "private")
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "30", refused.text
    assert refused.json()["detail"] == (
        f"queue: {LIMITS['max_queued']} of your submissions are waiting or running "
        f"(at most {LIMITS['max_queued']}); retry when one finishes"
    )
    assert call(app, "DELETE", f"/submissions/{accepted[0].json()['id']}", token).status_code == 200
    assert _submit(app, token, "private").status_code == 202


def test_a_body_over_the_size_limit_is_413_naming_the_body_and_stores_nothing(mutable):
    app, _ = mutable
    before = _count(app)
    big = ADD + "# " + "x" * LIMITS["max_body_bytes"] + "\n"
    response = call(
        app,
        "POST",
        "/submissions",
        app.sample.tokens["eve"],
        json={"problem": PROBLEM, "solution": solution_dict(big, definition=PROBLEM)},
    )
    assert response.status_code == 413 and response.json()["field"] == "body", response.text
    assert f"over the limit of {LIMITS['max_body_bytes']} bytes" in response.json()["detail"]
    assert _count(app) == before


def _submit(app: InProcessService, token: str, mode: str):
    return call(
        app,
        "POST",
        "/submissions",
        token,
        json={"problem": PROBLEM, "mode": mode, "solution": solution_dict(ADD, definition=PROBLEM)},
    )


def _count(app: InProcessService) -> int:
    with app.service.session_factory() as session:
        return session.scalar(select(func.count()).select_from(Submission))


def _row(app: InProcessService, submission_id: int | None) -> tuple | None:
    """(deleted_at, status) of a submission row; None where there is none."""
    if submission_id is None:
        return None
    with app.service.session_factory() as session:
        row = session.get(Submission, submission_id)
        return None if row is None else (row.deleted_at, row.status)
