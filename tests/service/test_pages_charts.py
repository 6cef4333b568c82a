"""The server-drawn SVG charts: well-formed markup, the roofs where the hardware puts them, escaped text."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from datetime import datetime, timedelta, timezone

from solbench.service.web.charts import (
    Bar,
    RooflinePoint,
    TimelineEvent,
    TimingSpread,
    TrendPoint,
    bar_chart,
    firsts_timeline,
    roofline_chart,
    timing_spread_chart,
    trend_chart,
)
from solbench.service.web.svg import LogScale, milliseconds, nice_ticks, si

SVG = "{http://www.w3.org/2000/svg}"
T0 = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)


def parse(markup: str) -> ElementTree.Element:
    root = ElementTree.fromstring(markup)
    assert root.tag == f"{SVG}svg"
    return root


def texts(root: ElementTree.Element) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


def test_roofline_puts_the_ridge_at_peak_over_bandwidth_and_links_each_point():
    points = [
        RooflinePoint("alice #1", 2.0, 5e12, href="/submissions/1"),
        RooflinePoint("bob #2", 100.0, 3e14, href="/submissions/2"),
    ]
    root = parse(roofline_chart(points, memory_bandwidth_bytes_per_s=4e12, peak_flops_per_s=1e15, hardware="H200"))
    labels = texts(root)
    assert "ridge 250 FLOP/B" in labels
    assert "compute roof 1 PFLOP/s" in labels and "memory roof 4 TB/s" in labels
    roof = root.find(f"{SVG}polyline")
    (x1, y1), (x2, y2), (x3, y3) = [tuple(map(float, p.split(","))) for p in roof.get("points").split()]
    assert x1 < x2 < x3 and y1 > y2 == y3  # rises along the memory roof, then flat under the compute roof
    links = [a.get("href") for a in root.iter(f"{SVG}a")]
    assert links == ["/submissions/1", "/submissions/2"]
    tooltips = [t.text for t in root.iter(f"{SVG}title")][1:]
    assert tooltips[0] == "alice #1: 5 TFLOP/s at 2 FLOP/B, 62% of the roof"


def test_roofline_marks_a_point_above_the_roof_in_red():
    root = parse(
        roofline_chart(
            [RooflinePoint("too fast", 1.0, 9e12)],
            memory_bandwidth_bytes_per_s=4e12,
            peak_flops_per_s=1e15,
            hardware="H200",
        )
    )
    assert [c.get("fill") for c in root.iter(f"{SVG}circle")] == ["#dc2626"]


def test_roofline_without_peaks_says_so_instead_of_drawing_nothing():
    root = parse(roofline_chart([], memory_bandwidth_bytes_per_s=0, peak_flops_per_s=0, hardware="mystery"))
    assert texts(root) == ["no peak figures for mystery"]


def test_firsts_timeline_steps_up_at_each_first_and_names_the_last_holder():
    events = [
        TimelineEvent(T0, 0.5, "alice"),
        TimelineEvent(T0 + timedelta(hours=5), 0.8, "bob"),
        TimelineEvent(T0 + timedelta(hours=2), 0.6, "carol"),
    ]
    root = parse(firsts_timeline(events, now=T0 + timedelta(hours=6)))
    step = [tuple(map(float, p.split(","))) for p in root.find(f"{SVG}polyline").get("points").split()]
    ys = [y for _, y in step]
    assert ys == sorted(ys, reverse=True)  # the best score never falls (SVG y grows downwards)
    assert len(step) == 2 * len(events)  # a vertical and a horizontal segment per first, one tail
    assert "bob" in texts(root) and "11-01 12:00" in texts(root)
    assert [t.text for t in root.iter(f"{SVG}title")][1:] == [
        "alice: S = 0.500 on 2026-11-01 12:00",
        "carol: S = 0.600 on 2026-11-01 14:00",
        "bob: S = 0.800 on 2026-11-01 17:00",
    ]


def test_bar_chart_escapes_names_and_keeps_the_given_order():
    bars = [Bar("<script>x</script>", 0.9, href="/users/x?a=1&b=2"), Bar("bob", 0.4)]
    markup = bar_chart(bars, title="Set scores")
    assert "<script>" not in markup and "&lt;script&gt;" in markup and "a=1&amp;b=2" in markup
    root = parse(markup)
    widths = [float(r.get("width")) for r in root.iter(f"{SVG}rect")]
    assert widths[0] > widths[1] > 0
    assert texts(root)[:2] == ["<script>x</script>", "0.9"]


def test_trend_chart_draws_one_dot_per_hour():
    points = [TrendPoint(T0 + timedelta(hours=h), float(v)) for h, v in enumerate([3, 0, 7, 2])]
    root = parse(trend_chart(points, title="Evaluations per hour", y_label="evaluations"))
    assert len(list(root.iter(f"{SVG}circle"))) == 4
    assert "evaluations" in texts(root)


def test_timing_spread_orders_min_median_max_and_marks_t_sol_and_t_b():
    rows = [
        TimingSpread("w-small", 0.010, 0.012, 0.020, t_sol_ms=0.004, t_baseline_ms=0.015),
        TimingSpread("w-large", 1.0, 1.1, 1.5, t_sol_ms=0.5),
    ]
    root = parse(timing_spread_chart(rows))
    spreads = [line for line in root.iter(f"{SVG}line") if line.get("class") == "spread"]
    assert [float(line.get("x1")) < float(line.get("x2")) for line in spreads] == [True, True]
    assert float(spreads[0].get("x2")) < float(spreads[1].get("x1"))  # the shared log axis keeps sizes apart
    ticks = [line.get("stroke") for line in root.iter(f"{SVG}line") if line.get("stroke") in ("#059669", "#d97706")]
    assert ticks == ["#059669", "#d97706", "#059669"]
    assert "w-small: min 10 µs, median 12 µs, max 20 µs" in [t.text for t in root.iter(f"{SVG}title")]


def test_empty_charts_say_what_is_missing():
    assert texts(parse(firsts_timeline([]))) == ["no firsts yet"]
    assert texts(parse(timing_spread_chart([]))) == ["no timed workload"]
    assert texts(parse(trend_chart([], title="t", y_label="y"))) == ["no activity yet"]


def test_units_and_ticks():
    assert si(1.5e12, "FLOP/s") == "1.5 TFLOP/s" and si(999.96, "B") == "1 kB" and si(0, "B") == "0 B"
    assert milliseconds(0.0123) == "12.3 µs" and milliseconds(2500) == "2.5 s"
    assert nice_ticks(0, 1, 4) == [0, 0.5, 1.0] and nice_ticks(0, 10, 5) == [0, 2, 4, 6, 8, 10]
    assert LogScale(1, 1e4, 0, 100).ticks() == [1, 10, 100, 1000, 10000]
    assert re.fullmatch(r"[\d.]+", f"{LogScale(1, 100, 0, 100)(10):g}") and LogScale(1, 100, 0, 100)(10) == 50
