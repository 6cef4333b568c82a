"""Before a set is frozen, no reader but the author and admins sees text a submission's code produced.

Through the real app in process (FastAPI's TestClient over a migrated SQLite database): the API's submission view
and the submission page. A ranked submission to the open set raised on a workload, quoting its source line in the
failure and the log; a static finding names its file and line. Anonymous readers and other users get the fixed
reason instead, and no code hash; the author and an admin get everything; after the freeze everyone does.
"""

from __future__ import annotations

import pytest

from solbench.service.disclosure import HIDDEN

SECRET = 'kernel.py", line 9, in run: out = fused(x)  # proprietary trick'


@pytest.fixture(scope="module")
def served(in_process_service):
    from solbench.service.models import Result

    app = in_process_service
    with app.service.session_factory.begin() as session:
        for submission_id in (app.sample.open_set_submission, app.sample.frozen_set_submission):
            result = session.query(Result).filter_by(submission_id=submission_id).one()
            traces = [dict(t) for t in result.traces]
            evaluation = dict(traces[0]["evaluation"], status="RUNTIME_ERROR", log=f"Traceback: {SECRET}\n")
            evaluation["solbench"] = dict(
                evaluation["solbench"],
                failure=f"RuntimeError: {SECRET}",
                failed_rule=None,
                checks=[
                    {
                        "rule": "static:threads",
                        "passed": True,
                        "phase": "static",
                        "detail": f"{SECRET}: threads (warn): starts a thread",
                    },
                    {
                        "rule": "integrity",
                        "passed": False,
                        "phase": "runtime",
                        "detail": f"torch.rsqrt replaced at {SECRET}",
                    },
                ],
            )
            evaluation.pop("performance", None)
            evaluation.pop("correctness", None)
            evaluation["solbench"].pop("timing", None)
            traces[0] = dict(traces[0], evaluation=evaluation)
            result.traces = traces
    return app


@pytest.mark.parametrize("reader", ["anonymous", "another user"])
def test_others_see_no_solution_derived_text_before_the_freeze(served, reader):
    app, sample = served, served.sample
    token = None if reader == "anonymous" else sample.tokens["carol"]
    response = app.get(f"/api/v1/submissions/{sample.open_set_submission}", token)
    assert response.status_code == 200, response.text
    body = response.json()
    assert "proprietary" not in response.text and "kernel.py" not in response.text
    assert body["solution"] is None and body["code_hash"] is None
    evaluation = body["result"]["traces"][0]["evaluation"]
    assert evaluation["status"] == "RUNTIME_ERROR" and evaluation["log"] == HIDDEN
    assert evaluation["solbench"]["failure"] == f"RUNTIME_ERROR: {HIDDEN}"
    assert {c["rule"]: c["detail"] for c in evaluation["solbench"]["checks"]} == {
        "static:threads": HIDDEN,
        "integrity": HIDDEN,
    }
    assert body["result"]["score"] is not None  # the leaderboard itself stays public

    page = app.get(f"/submissions/{sample.open_set_submission}", token)
    assert page.status_code == 200 and "proprietary" not in page.text and "kernel.py" not in page.text


@pytest.mark.parametrize("reader", ["bob", "admin"])
def test_the_author_and_admins_see_everything(served, reader):
    app, sample = served, served.sample
    token = app.admin if reader == "admin" else sample.tokens["bob"]
    body = app.get(f"/api/v1/submissions/{sample.open_set_submission}", token).json()
    evaluation = body["result"]["traces"][0]["evaluation"]
    assert SECRET in evaluation["log"] and SECRET in evaluation["solbench"]["failure"]
    assert body["code_hash"] and body["solution"] is not None
    page = app.get(f"/submissions/{sample.open_set_submission}", token)
    assert "proprietary trick" in page.text


def test_after_the_freeze_everyone_sees_the_text(served):
    app, sample = served, served.sample
    body = app.get(f"/api/v1/submissions/{sample.frozen_set_submission}").json()
    assert SECRET in body["result"]["traces"][0]["evaluation"]["log"] and body["code_hash"]
