"""The API's door, in process (fast tier): every bad request is a 4xx naming what is wrong, and a submission a
reader may not see answers exactly as one that does not exist."""

from __future__ import annotations

import pytest

from conftest import solution_dict

PROBLEM = "vector_add_fp32"  # a problem of the sample suite (solbench.service.web.sample_data)
TOO_BIG = "99999999999999999999999"


def test_a_source_too_deep_to_parse_is_refused_naming_its_field(in_process_service):
    app = in_process_service
    source = "def run(x, y):\n    return x + y\nunused = " + "+".join(["1"] * 60000) + "\n"
    response = app.client.post(
        "/api/v1/submissions",
        headers={"Authorization": f"Bearer {app.sample.tokens['eve']}"},
        json={"problem": PROBLEM, "solution": solution_dict(source, definition=PROBLEM)},
    )
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "solution.sources[0].content" and "unreadable" in response.json()["detail"]


@pytest.mark.parametrize("submission_id", [TOO_BIG, "0", "-3", str(2**63)])
def test_ids_no_row_can_have_are_404_not_500(in_process_service, submission_id):
    app = in_process_service
    admin = app.admin
    assert app.get(f"/api/v1/submissions/{submission_id}", admin).status_code == 404
    assert app.get(f"/api/v1/submissions/{submission_id}/bundle", admin).status_code == 404
    assert (
        app.client.delete(
            f"/api/v1/submissions/{submission_id}", headers={"Authorization": f"Bearer {admin}"}
        ).status_code
        == 404
    )
    assert app.get(f"/submissions/{submission_id}").status_code == 404


@pytest.mark.parametrize("reader", [None, "carol"])
def test_another_users_private_submission_answers_as_if_it_did_not_exist(in_process_service, reader):
    app = in_process_service
    private = app.sample.private_submission
    token = app.sample.tokens[reader] if reader else None
    missing = app.get("/api/v1/submissions/999999", token)
    for path in (f"/api/v1/submissions/{private}", f"/api/v1/submissions/{private}/bundle"):
        response = app.get(path, token)
        assert response.status_code == 404 and response.json()["detail"] == missing.json()["detail"].replace(
            "999999", str(private)
        ), response.text
    if token:
        deleted = app.client.delete(f"/api/v1/submissions/{private}", headers={"Authorization": f"Bearer {token}"})
        assert deleted.status_code == 404
    assert app.get(f"/submissions/{private}", token).status_code == 404
    assert app.get(f"/api/v1/submissions/{private}", app.sample.tokens["alice"]).status_code == 200
    assert app.get(f"/api/v1/submissions/{private}", app.admin).status_code == 200


def test_a_burst_of_submissions_never_passes_a_limit(in_process_service, monkeypatch):
    """50 concurrent submissions of a new user: exactly `max_queued` (10) are accepted, however they interleave.
    The count is slowed down so that, without the lock, every request would count before any had inserted."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    import solbench.service.api.submissions as submissions
    from solbench.service.auth import add_user

    app = in_process_service
    token = add_user(app.service.session_factory, "burst").token
    original = submissions.check_limits

    def slow_check(*args, **kwargs):
        original(*args, **kwargs)
        time.sleep(0.02)

    monkeypatch.setattr(submissions, "check_limits", slow_check)
    body = {
        "problem": PROBLEM,
        "mode": "private",
        "solution": solution_dict("import torch\n\ndef run(x, y):\n    return x + y\n", definition=PROBLEM),
    }

    def submit(_):
        return app.client.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"}, json=body)

    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = [r.status_code for r in pool.map(submit, range(50))]
    assert statuses.count(202) == app.service.settings.limits.max_queued == 10, statuses
    assert set(statuses) == {202, 429}


def test_an_idempotency_key_belongs_to_its_user(in_process_service):
    """Another user sending the same Idempotency-Key gets a new submission of their own, never the first user's
    (which would show them, and let them track, someone else's private submission); its owner's retry still
    gets the first one back."""
    from solbench.service.auth import add_user

    app = in_process_service
    ann, ben = (add_user(app.service.session_factory, name).token for name in ("key-ann", "key-ben"))
    body = {
        "problem": PROBLEM,
        "mode": "private",
        "solution": solution_dict("import torch\n\ndef run(x, y):\n    return x + y\n", definition=PROBLEM),
    }

    def submit(token: str):
        response = app.client.post(
            "/api/v1/submissions", json=body, headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "retry-1"}
        )
        assert response.status_code == 202, response.text
        return response

    first, other, retried = submit(ann), submit(ben), submit(ann)
    assert other.json()["id"] != first.json()["id"] and "Idempotent-Replayed" not in other.headers
    assert app.get(f"/api/v1/submissions/{other.json()['id']}", ben).json()["user"] == "key-ben"
    assert retried.json()["id"] == first.json()["id"] and retried.headers["Idempotent-Replayed"] == "true"
