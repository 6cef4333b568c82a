"""reach.charts: the charts of shipped reach reports, drawn from several threads at once as the service does."""

import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from solbench.reach.report import ReachReport

REPORTS = sorted((Path(__file__).resolve().parents[2] / "docs" / "reach").glob("*.json"))


@pytest.fixture(scope="module")
def reports():
    pytest.importorskip("matplotlib")
    return [ReachReport.model_validate_json(path.read_text()) for path in REPORTS]


@pytest.mark.slow
def test_charts_drawn_concurrently_are_each_whole_and_name_their_models(reports):
    from solbench.reach.charts import chart_svg

    pairs = [reports[i : i + 2] for i in range(len(reports) - 1)] * 2
    with ThreadPoolExecutor(max_workers=4) as pool:
        drawn = list(pool.map(chart_svg, pairs))
    for pair, svg in zip(pairs, drawn):
        root = ElementTree.fromstring(svg)
        assert root.tag.endswith("svg")
        for report in pair:
            assert report.model.split()[0] in svg


@pytest.mark.slow
def test_both_formats_are_written_beside_each_other(reports, tmp_path):
    from solbench.reach.charts import draw_reports

    written = draw_reports(reports[:2], tmp_path / "chart.svg")
    assert sorted(p.suffix for p in written) == [".png", ".svg"]
    assert (tmp_path / "chart.png").read_bytes().startswith(b"\x89PNG")
