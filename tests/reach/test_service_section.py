"""The problem and set pages show which reach reports' time a problem covers, with the reach chart inline."""

import json

import pytest

from solbench.reach.report import ClassTime, ProblemCoverage, ReachReport
from solbench.service.web import views
from solbench.service.web.reach_view import reach_section
from solbench.service.web.rendering import render

pytestmark = pytest.mark.slow  # draws with matplotlib


def report(model: str, problem: str, share: float) -> ReachReport:
    classes = [
        ClassTime(cls="gemm", ms=6.0, ms_std=0.1, share=0.6, share_std=0.01),
        ClassTime(cls="addressable", ms=4.0, ms_std=0.1, share=0.4, share_std=0.01),
    ]
    covered = ProblemCoverage(
        problem=problem,
        set="DLRM",
        op_type="embedding_bag",
        match="model",
        ms=4.0 * share,
        share_of_step=0.4 * share,
        share_of_addressable=share,
    )
    return ReachReport(
        model=model,
        kind="dlrm",
        mode="training",
        device="cpu",
        config={},
        scaling=[],
        steps=3,
        warmup=1,
        step_ms=10.0,
        step_ms_std=0.1,
        wall_ms=10.0,
        build_seconds=0.1,
        profile_seconds=1.0,
        addressable_fraction=0.4,
        addressable_fraction_std=0.01,
        vendor_fraction=0.6,
        vendor_fraction_std=0.01,
        classes=classes,
        ops=[],
        problems_root=None,
        covered_fraction=0.4 * share,
        covered_of_addressable=share,
        problems=[covered],
        uncovered=[],
        problem_weights={problem: share},
        rules={},
    )


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "dlrm.json").write_text(json.dumps(report("DLRM-DCNv2", "bags", 0.5).as_json()))
    (tmp_path / "other.json").write_text(json.dumps(report("Tiny <b>", "norm", 0.25).as_json()))
    (tmp_path / "not-a-report.json").write_text("{}")
    return tmp_path


def test_the_section_lists_the_covering_models_and_inlines_the_chart(folder):
    section = reach_section(folder, {"bags"})
    assert [(r.model, r.share_of_addressable) for r in section.rows] == [("DLRM-DCNv2", 0.5)]
    assert section.chart.startswith("<svg")
    assert reach_section(folder, {"absent"}) is None and reach_section(None, {"bags"}) is None


def test_the_problem_page_renders_the_section_and_escapes_model_names(folder):
    section = reach_section(folder, {"norm"})
    html = render(
        "set.html",
        title="L1",
        nav="home",
        hardware="H200",
        description="",
        set=views.SetCard("L1", "Level 1", 3, 120, None),
        rows=[],
        pager=views.pagination(1, 50, 0),
        problems=[],
        chart="",
        chart_rows=20,
        reach=section,
    )
    assert 'id="reach-models"' in html and "Tiny &lt;b&gt;" in html and "25.0%" in html
    assert 'id="reach-chart"' in html and "<svg" in html


def test_a_model_name_matplotlib_would_read_as_maths_still_draws(tmp_path):
    """`$…$` in a label is mathtext to matplotlib, and a bad expression fails the drawing: labels escape `$`."""
    (tmp_path / "odd.json").write_text(json.dumps(report(r"net$\undefinedcmd$", "bags", 0.5).as_json()))
    section = reach_section(tmp_path, {"bags"})
    assert section.chart is not None and section.chart.startswith("<svg")
