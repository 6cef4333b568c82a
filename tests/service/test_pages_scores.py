"""The submission page shows the score over the public workloads and the one over the held-out workloads apart,
and says what the ranked S averages: S counts the held-out workloads, whose rows nobody is shown, so S alone
differs from the mean of the rows a reader sees.

Through the real app in process (FastAPI's TestClient) over the sample leaderboard, whose ranked submissions ran
the problem's held-out workloads too (sample_data.HELD_OUT_QUALITY: a little worse there, as on a real server).
"""

from __future__ import annotations

import re

import pytest


def _text(html: str, element_id: str) -> str:
    return re.search(rf'id="{element_id}">([^<]*)<', html).group(1)


def _row_scores(html: str) -> list[float]:
    """The S column of the workloads table (its 4th number column), rows without an S left out."""
    table = re.search(r'<table id="results">(.*?)</table>', html, re.DOTALL).group(1)
    cells = [re.findall(r'<td class="num">([^<]*)</td>', row) for row in table.split("<tr>")[2:]]
    return [float(row[3]) for row in cells if row[3] != "—"]


@pytest.mark.parametrize("reader", ["anonymous", "author", "admin"])
def test_public_and_held_out_scores_are_shown_apart_and_the_held_out_rows_to_nobody(in_process_service, reader):
    from solbench.service.models import Result

    app, sample = in_process_service, in_process_service.sample
    token = {"anonymous": None, "author": sample.tokens["bob"], "admin": app.admin}[reader]
    submission = sample.open_set_submission  # bob's, ranked
    with app.service.session_factory() as session:
        result = session.query(Result).filter_by(submission_id=submission).one()
        hidden = [t["workload"]["uuid"] for t in result.held_out_traces]
        stored = result.score, result.public_score, result.held_out_score
    assert hidden, "the sample's ranked submissions run held-out workloads"

    page = app.get(f"/submissions/{submission}", token)
    assert page.status_code == 200
    rows = _row_scores(page.text)
    public = float(_text(page.text, "public-score"))
    assert public == pytest.approx(sum(rows) / len(rows), abs=1e-3)  # the rows show 3 decimals
    assert _text(page.text, "score") == f"{stored[0]:.3f}" and abs(stored[0] - public) > 1e-3
    assert _text(page.text, "held-out-score") == f"{stored[2]:.3f}" != f"{public:.3f}"
    assert _text(page.text, "score-basis") == (
        f"the score that ranks: the mean over all {len(rows) + len(hidden)} workloads, {len(rows)} public and "
        f"{len(hidden)} held out, each counting once"
    )
    assert not any(uuid in page.text for uuid in hidden)

    api = app.get(f"/api/v1/submissions/{submission}", token).json()["result"]
    assert [f"{api[k]:.3f}" for k in ("score", "public_score", "held_out_score")] == [
        _text(page.text, i) for i in ("score", "public-score", "held-out-score")
    ]
    assert api["held_out_workloads"] == len(hidden) and len(api["traces"]) == len(rows)


def test_a_private_submission_says_its_score_covers_the_public_workloads_only(in_process_service):
    app, sample = in_process_service, in_process_service.sample
    page = app.get(f"/submissions/{sample.private_submission}", sample.tokens["alice"])
    rows = _row_scores(page.text)
    assert float(_text(page.text, "score")) == pytest.approx(sum(rows) / len(rows), abs=1e-3)
    assert "do not run the held-out workloads and do not rank" in _text(page.text, "score-basis")
    assert 'id="held-out-score"' not in page.text
