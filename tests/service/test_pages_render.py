"""Page templates rendered from view values alone (no server): content, escaping, hidden code, pagination."""

from __future__ import annotations

from datetime import datetime

import pytest

from solbench.service.web import views
from solbench.service.web.charts import firsts_timeline
from solbench.service.web.rendering import render
from solbench.spec.solution import SourceFile

T0 = datetime(2026, 11, 1, 12, 0)


def detail(**changes) -> views.SubmissionDetail:
    values = dict(
        id=7,
        user="alice",
        set="L1",
        problem="rmsnorm",
        solution="fast-rms",
        mode="ranked",
        status="done",
        verdict="PASSED",
        score=0.73,
        submitted_at=T0,
        finished_at=T0,
        hardware="H200",
        harness_version="0.1.0",
        workloads=[views.WorkloadResultRow("w1", "PASSED", 0.8, 0.012, 0.004, 0.02, 0.011, 0.012, 0.015)],
        findings=[views.FindingRow("timer-patch", "warn", "kernel.py:3", "reads <time.perf_counter>")],
        sources=None,
        code_note="The code is shown once set L1 is frozen.",
    )
    values.update(changes)
    return views.SubmissionDetail(**values)


def test_submission_page_hides_code_with_the_reason_and_escapes_findings():
    html = render("submission.html", title="#7", nav="", s=detail(), spread_chart="<svg></svg>")
    assert "The code is shown once set L1 is frozen." in html and 'id="code"' not in html
    assert "reads &lt;time.perf_counter&gt;" in html and "<time.perf_counter>" not in html
    assert "12 µs" in html and "4 µs" in html and "0.800" in html and "<svg></svg>" in html


def test_submission_page_shows_code_and_the_score_history_after_a_rescore():
    history = [views.ScoreHistoryRow("0.1.0", 0.70, T0), views.ScoreHistoryRow("0.2.0", 0.73, T0, "new flush")]
    html = render(
        "submission.html",
        title="#7",
        nav="",
        spread_chart="",
        s=detail(sources=[SourceFile(path="kernel.py", content="def run(x):\n    return x</b>")], history=history),
    )
    assert "return x&lt;/b&gt;" in html and 'id="code-hidden"' not in html
    assert 'id="history"' in html and "new flush" in html and "<code>0.2.0</code>" in html


def test_set_page_links_pages_and_ranks():
    rows = [views.LeaderRow(51, "bob", 0.5, 1, 3)]
    html = render(
        "set.html",
        title="L1",
        nav="home",
        hardware="H200",
        description="",
        set=views.SetCard("L1", "Level 1", 3, 120, None),
        rows=rows,
        pager=views.pagination(2, 50, 120),
        problems=[views.ProblemLink("rmsnorm", 2, 4, 0.9, "al")],
        chart="",
        chart_rows=20,
    )
    assert "page 2 of 3 (120 rows)" in html and 'href="/sets/L1?page=3"' in html and 'href="/sets/L1?page=1"' in html
    assert '<td class="num">51</td><td><a href="/users/bob">bob</a></td><td class="num">0.500</td>' in html
    assert "others' code is shown once the set is frozen" in html


@pytest.mark.parametrize("page,expected", [(0, 1), (9, 3), (2, 2)])
def test_pagination_clamps_into_range(page, expected):
    assert views.pagination(page, 50, 120).page == expected and views.pagination(page, 50, 120).pages == 3


def test_home_page_lists_sets_and_firsts():
    html = render(
        "home.html",
        title="Sets",
        nav="home",
        hardware="H200",
        activity_hours=48,
        activity_chart="",
        totals={"submissions": 5000, "users": 40, "last_24h": 12, "queued": 3},
        sets=[views.SetCard("L1", "", 10, 5000, T0, "alice", 0.61)],
        firsts=[views.FirstRow(T0, "bob", "L1", "gemm", 0.9, 0.8, 12)],
    )
    assert "frozen 2026-11-01" in html and 'href="/sets/L1/problems/gemm"' in html and "0.610" in html
    assert 'id="total-submissions">5000<' in html


def test_charts_are_inserted_as_markup_but_names_are_not():
    svg = firsts_timeline([views_event()])
    html = render(
        "user.html",
        title="u",
        nav="",
        user={"name": "<b>eve</b>", "joined": T0},
        own=False,
        standings=[],
        chart=svg,
        submissions=[],
        pager=views.pagination(1, 50, 0),
    )
    assert "<svg" in html and "&lt;b&gt;eve&lt;/b&gt;" in html and "<b>eve</b>" not in html.replace(svg, "")


def views_event():
    from solbench.service.web.charts import TimelineEvent

    return TimelineEvent(T0, 0.5, "<b>eve</b>")


def test_roofline_point_is_total_work_over_total_bytes_and_total_time():
    from types import SimpleNamespace

    from solbench.service.web.roofline_data import problem_roofline

    costs = {
        "a": {"flops": 1e9, "bytes": 4e9, "compute_ms": 0.01, "memory_ms": 1.0},
        "b": {"flops": 3e9, "bytes": 4e9, "compute_ms": 0.03, "memory_ms": 1.0},
    }

    def result(*latencies_ms):
        return SimpleNamespace(
            traces=[
                {"workload": {"uuid": uuid}, "evaluation": {"performance": {"latency_ms": ms}}}
                for uuid, ms in zip("ab", latencies_ms)
            ]
        )

    costs["held-out-1"] = {"flops": 1e12, "bytes": 1.0, "compute_ms": 9.0, "memory_ms": 9.0}  # never counted
    roofline = problem_roofline(costs, [("alice", 1, result(2.0, 2.0)), ("bob", 2, result(2.0))], ["a", "b"])
    assert roofline.peak_flops_per_s == pytest.approx(4e9 / 0.04e-3) and roofline.bandwidth_bytes_per_s == 4e12
    (point,) = roofline.points  # bob's result lacks workload b: no honest total, no point
    assert point.label == "alice #1" and point.href == "/submissions/1"
    assert point.intensity_flops_per_byte == 0.5 and point.achieved_flops_per_s == pytest.approx(4e9 / 4e-3)
    assert problem_roofline(None, [], ["a"]) is None and problem_roofline(costs, [], ["a", "c"]) is None
