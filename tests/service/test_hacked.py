"""The hacked state on the board: an admin's flag (and its lifting), who reads the reason, the admins' listing, and
`solbench admin flag` / `unflag` on a real database.

Through the real app in process (FastAPI's TestClient over a migrated SQLite database filled with the page sample),
each test on its own service: flags change what every later test would see.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from service.conftest import InProcessService
from solbench.service import queries
from solbench.service.auth import add_user
from solbench.service.errors import ServiceError, UnknownSubmission
from solbench.service.hacked import flag, flagged_submissions, unflag
from solbench.service.models import Submission

REASON = "returns the output of the previous call (replay)"


@pytest.fixture
def app(tmp_path):
    service = InProcessService(tmp_path)
    with service.client:
        yield service
    service.close()


def leader(app: InProcessService) -> tuple[str, str, int, str]:
    """(set, problem, submission id, author's token) of the newest first place of the sample: the top of its board."""
    with app.service.session_factory() as session:
        newest = queries.recent_firsts(session, limit=1)[0]
        author = session.get(Submission, newest.submission_id).user.name
    token = app.sample.tokens.get(author) or add_user(app.service.session_factory, author).token
    return newest.set, newest.problem, newest.submission_id, token


def board_ids(app: InProcessService, set_name: str, problem: str) -> tuple[list[int], list[int]]:
    """Submission ids of the problem board's entries and of its first places, as the API serves them."""
    board = app.get(f"/api/v1/leaderboards/{set_name}/{problem}").json()
    return [e["submission_id"] for e in board["entries"]], [f["submission_id"] for f in board["firsts"]]


def test_an_admin_flag_hides_a_submission_from_rankings_and_firsts_and_unflag_restores_them(app):
    set_name, problem, hacked, _ = leader(app)
    before = {
        path: app.get(path).json()
        for path in (f"/api/v1/leaderboards/{set_name}/{problem}", f"/api/v1/leaderboards/{set_name}")
    }
    entries, firsts = board_ids(app, set_name, problem)
    assert entries[0] == hacked and firsts[-1] == hacked

    flag(app.service.session_factory, hacked, REASON, "root")
    entries, firsts = board_ids(app, set_name, problem)
    assert hacked not in entries and hacked not in firsts
    with app.service.session_factory() as session:
        assert hacked not in [f.submission_id for f in queries.recent_firsts(session, limit=1000)]
    assert f"/submissions/{hacked}" not in app.get("/").text  # the home page's recent firsts

    assert unflag(app.service.session_factory, hacked) is None  # nothing else holds it off the boards
    assert {path: app.get(path).json() for path in before} == before


def test_the_author_and_admins_read_why_others_find_no_such_submission(app):
    _, _, hacked, author = leader(app)
    with app.service.session_factory() as session:
        author_name = session.get(Submission, hacked).user.name
    other = next(token for name, token in app.sample.tokens.items() if name != author_name)
    flag(app.service.session_factory, hacked, REASON, "root")

    for token in (author, app.admin):
        view = app.get(f"/api/v1/submissions/{hacked}", token)
        assert view.status_code == 200, view.text
        assert view.json()["hacked"] | {"flagged_at": None} == {
            "source": "admin",
            "reason": REASON,
            "rule": None,
            "flagged_by": "root",
            "flagged_at": None,
        }
        page = app.get(f"/submissions/{hacked}", token)
        assert page.status_code == 200 and REASON in page.text and 'id="hacked"' in page.text
    for token in (other, None):
        assert app.get(f"/api/v1/submissions/{hacked}", token).status_code == 404
        page = app.get(f"/submissions/{hacked}", token)
        assert page.status_code == 404 and REASON not in page.text
        listed = app.get(f"/api/v1/users/{author_name}", token).json()
        assert hacked not in [s["id"] for s in listed["submissions"]] + [b["submission_id"] for b in listed["best"]]
        assert f'/submissions/{hacked}"' not in app.get(f"/users/{author_name}", token).text
    own = app.get(f"/api/v1/users/{author_name}", author).json()
    assert hacked in [s["id"] for s in own["submissions"]]  # the author still finds it among their own


def test_the_api_and_the_page_agree_on_a_banned_users_a_hacked_and_a_normal_ranked_submission(app):
    """One rule (`queries.is_readable`): a banned user's ranked submission, like a hacked one, is no such submission
    to other readers (the API used to serve it while the page hid it); admins read all three."""
    from sqlalchemy import select

    from solbench.service.auth import set_banned

    with app.service.session_factory() as session:
        ranked = session.scalars(
            select(Submission).where(Submission.mode == "ranked", Submission.status == "done").order_by(Submission.id)
        ).all()
        by_author = {s.user.name: s.id for s in ranked}
    (banned_user, banned), (_, hacked), (_, normal) = list(by_author.items())[:3]
    set_banned(app.service.session_factory, banned_user)
    flag(app.service.session_factory, hacked, REASON, "root")
    reader = add_user(app.service.session_factory, "reader").token
    for token, expected in ((None, (404, 404, 200)), (reader, (404, 404, 200)), (app.admin, (200, 200, 200))):
        for submission, status in zip((banned, hacked, normal), expected):
            api = app.get(f"/api/v1/submissions/{submission}", token).status_code
            page = app.get(f"/submissions/{submission}", token).status_code
            assert (api, page) == (status, status), (token == app.admin, submission)
        listed = app.get(f"/api/v1/users/{banned_user}", token)
        assert listed.status_code == expected[0]


def test_admins_list_hacked_submissions_in_the_api_and_on_the_status_page(app):
    _, problem, hacked, author = leader(app)
    flag(app.service.session_factory, hacked, REASON, "root")
    listed = app.get("/api/v1/admin/flagged", app.admin)
    assert listed.status_code == 200
    assert [(f["id"], f["problem"], f["hacked"]["reason"]) for f in listed.json()] == [(hacked, problem, REASON)]
    assert app.get("/api/v1/admin/flagged", author).status_code == 403
    assert app.get("/api/v1/admin/flagged").status_code == 401
    status = app.get("/status", app.admin).text
    assert 'id="flagged"' in status and REASON in status and f"/submissions/{hacked}" in status
    for token in (author, None):
        assert REASON not in app.get("/status", token).text and 'id="flagged"' not in app.get("/status", token).text


def test_flagging_again_replaces_the_reason_and_bad_requests_are_refused(app):
    factory = app.service.session_factory
    _, _, hacked, _ = leader(app)
    flag(factory, hacked, "first look", "root")
    assert flag(factory, hacked, REASON, "ann").reason == REASON
    with factory() as session:
        assert [(f.id, f.hacked.flagged_by) for f in flagged_submissions(session)] == [(hacked, "ann")]
    with pytest.raises(UnknownSubmission, match=r"ID 99999: no such submission"):
        flag(factory, 99999, REASON, "root")
    with pytest.raises(UnknownSubmission):
        flag(factory, 2**70, REASON, "root")  # beyond any row id: a miss, not a database error
    with pytest.raises(ServiceError, match="only ranked ones can be flagged"):
        flag(factory, app.sample.private_submission, REASON, "root")
    with pytest.raises(ServiceError, match="--reason: say why"):
        flag(factory, hacked, "   ", "root")
    unflag(factory, hacked)
    with pytest.raises(ServiceError, match="no admin flag to lift"):
        unflag(factory, hacked)


@pytest.mark.slow
def test_admin_flag_and_unflag_commands_on_a_real_database(tmp_path):
    """The real CLI, as an operator runs it, against the SQLite database in the data folder."""
    from solbench.service.db import open_database
    from solbench.service.settings import ServiceSettings
    from solbench.service.web.sample_data import HARDWARE, build_sample

    data = tmp_path / "data"
    sample = build_sample(data, submissions=30, users=6)
    settings = ServiceSettings(data_dir=data, suites=(sample.suite_dir,), hardware=HARDWARE, workers=0)
    engine, factory = open_database(settings.database_url)
    with factory() as session:
        newest = queries.recent_firsts(session, limit=1)[0]

    def admin(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "solbench", "admin", *args, "--data", str(data)]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    def on_board() -> bool:
        with factory() as session:
            board = queries.problem_leaderboard(session, newest.problem)
        return newest.submission_id in [e.submission_id for e in board.entries]

    assert on_board()
    flagged = admin("flag", str(newest.submission_id), "--reason", REASON, "--by", "ops")
    assert flagged.returncode == 0 and "off every board" in flagged.stdout, flagged.stderr
    assert not on_board()
    with factory() as session:
        [row] = flagged_submissions(session)
    assert (row.id, row.hacked.reason, row.hacked.flagged_by) == (newest.submission_id, REASON, "ops")

    lifted = admin("unflag", str(newest.submission_id))
    assert lifted.returncode == 0 and "back on the boards" in lifted.stdout, lifted.stderr
    assert on_board()

    for args, message in (
        (("flag", "99999", "--reason", REASON), "ID 99999: no such submission"),
        (("unflag", str(newest.submission_id)), "no admin flag to lift"),
    ):
        refused = admin(*args)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.strip().count("\n") == 0 and message in refused.stderr, refused.stderr
    engine.dispose()
