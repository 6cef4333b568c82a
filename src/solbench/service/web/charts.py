"""The charts the pages show, drawn on the server as SVG text: roofline, firsts timeline, bars, trend, timing spread.

Each function takes plain values (the numbers the database holds) and returns one `<svg>` element;
none computes a measurement of its own. Unit conventions follow the traces: seconds and FLOP/s
for the roofline, milliseconds for latencies, scores in [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from html import escape

from solbench.service.web.svg import (
    PALETTE,
    Drawing,
    LinearScale,
    LogScale,
    attrs,
    empty_chart,
    log_bounds,
    marker,
    milliseconds,
    si,
)

AXIS = {"stroke": "#6b7280", "stroke_width": 1}
GRID = {"stroke": "#e5e7eb", "stroke_width": 1}
ROOF = {"stroke": "#111827", "stroke_width": 2, "fill": "none"}
TIME_STEPS_S = (60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400, 30 * 86400, 365 * 86400)
"""Spacings of the time-axis ticks (a minute to a year), so labels fall on round hours and days."""


@dataclass(frozen=True)
class Margins:
    left: int = 64
    right: int = 16
    top: int = 16
    bottom: int = 40


@dataclass(frozen=True)
class RooflinePoint:
    """One submission on the roofline: its total work over its total bytes and its total time."""

    label: str
    intensity_flops_per_byte: float
    achieved_flops_per_s: float
    href: str | None = None


def roofline_chart(
    points: list[RooflinePoint],
    *,
    memory_bandwidth_bytes_per_s: float,
    peak_flops_per_s: float,
    hardware: str,
    width: int = 640,
    height: int = 360,
) -> str:
    """Achieved FLOP/s against arithmetic intensity on log-log axes, under the memory roof (bandwidth ×
    intensity) and the compute roof (peak); the ridge where they meet is marked. A point above the roofs
    is faster than the hardware allows and is drawn in red."""
    title = f"Roofline on {hardware}"
    if memory_bandwidth_bytes_per_s <= 0 or peak_flops_per_s <= 0:
        return empty_chart(title, f"no peak figures for {hardware}", width)
    margin = Margins(left=72, bottom=44)
    ridge = peak_flops_per_s / memory_bandwidth_bytes_per_s
    x_lo, x_hi = log_bounds([ridge] + [p.intensity_flops_per_byte for p in points], pad=8.0)
    y_values = [p.achieved_flops_per_s for p in points] + [memory_bandwidth_bytes_per_s * x_lo, peak_flops_per_s]
    y_lo, y_hi = log_bounds(y_values, pad=2.0)
    x = LogScale(x_lo, x_hi, margin.left, width - margin.right)
    y = LogScale(y_lo, y_hi, height - margin.bottom, margin.top)
    drawing = Drawing(width, height, title)
    _log_axes(drawing, x, y, margin, width, height, x_label="arithmetic intensity (FLOP/byte)", y_unit="FLOP/s")
    memory_start = max(x_lo, y_lo / memory_bandwidth_bytes_per_s)
    drawing.add(
        "polyline",
        class_="roof",
        points=(
            f"{x(memory_start):.1f},{y(memory_bandwidth_bytes_per_s * memory_start):.1f} "
            f"{x(ridge):.1f},{y(peak_flops_per_s):.1f} {x(x_hi):.1f},{y(peak_flops_per_s):.1f}"
        ),
        **ROOF,
    )
    drawing.text(
        x(ridge),
        y(peak_flops_per_s) - 6,
        f"ridge {ridge:.3g} FLOP/B",
        text_anchor="middle",
        class_="note",
        font_size=11,
    )
    drawing.text(
        x(x_hi) - 4,
        y(peak_flops_per_s) + 14,
        f"compute roof {si(peak_flops_per_s, 'FLOP/s')}",
        text_anchor="end",
        class_="note",
        font_size=11,
    )
    drawing.text(
        x(memory_start) + 4,
        y(memory_bandwidth_bytes_per_s * memory_start) - 6,
        f"memory roof {si(memory_bandwidth_bytes_per_s, 'B/s')}",
        class_="note",
        font_size=11,
    )
    for point in points:
        roof = min(peak_flops_per_s, memory_bandwidth_bytes_per_s * point.intensity_flops_per_byte)
        fraction = point.achieved_flops_per_s / roof if roof > 0 else 0.0
        colour = "#dc2626" if fraction > 1.0 else PALETTE[0]
        tooltip = (
            f"{point.label}: {si(point.achieved_flops_per_s, 'FLOP/s')} at "
            f"{point.intensity_flops_per_byte:.3g} FLOP/B, {fraction:.0%} of the roof"
        )
        drawing.raw(
            marker(x(point.intensity_flops_per_byte), y(point.achieved_flops_per_s), colour, tooltip, point.href)
        )
    if not points:
        drawing.text(width / 2, height / 2, "no passing submission yet", text_anchor="middle", class_="empty")
    return drawing.render()


@dataclass(frozen=True)
class TimelineEvent:
    """A first: the moment a submission took the best score of a problem."""

    when: datetime
    score: float
    label: str
    href: str | None = None


def firsts_timeline(
    events: list[TimelineEvent], *, now: datetime | None = None, width: int = 640, height: int = 240
) -> str:
    """The best score as a step line over time, one marker per first, labelled with who took it."""
    title = "Firsts over time"
    if not events:
        return empty_chart(title, "no firsts yet", width)
    events = sorted(events, key=lambda e: e.when)
    margin = Margins(bottom=36)
    start, end = events[0].when.timestamp(), (now or events[-1].when).timestamp()
    if end <= start:
        end = start + 3600.0
    x = LinearScale(start, end, margin.left, width - margin.right - 8)
    y = LinearScale(0.0, 1.0, height - margin.bottom, margin.top)
    drawing = Drawing(width, height, title)
    _score_axis(drawing, y, margin, width)
    _time_axis(drawing, x, height - margin.bottom, [e.when for e in events])
    steps = []
    for index, event in enumerate(events):
        if index:
            steps.append(f"{x(event.when.timestamp()):.1f},{y(events[index - 1].score):.1f}")
        steps.append(f"{x(event.when.timestamp()):.1f},{y(event.score):.1f}")
    steps.append(f"{x(end):.1f},{y(events[-1].score):.1f}")
    drawing.add("polyline", points=" ".join(steps), class_="step", fill="none", stroke=PALETTE[0], stroke_width=2)
    for index, event in enumerate(events):
        tooltip = f"{event.label}: S = {event.score:.3f} on {event.when:%Y-%m-%d %H:%M}"
        drawing.raw(
            marker(x(event.when.timestamp()), y(event.score), PALETTE[index % len(PALETTE)], tooltip, event.href)
        )
    last = events[-1]
    drawing.text(
        min(x(last.when.timestamp()) + 6, width - margin.right - 80),
        y(last.score) - 8,
        last.label,
        class_="note",
        font_size=11,
    )
    return drawing.render()


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    href: str | None = None
    note: str = ""


def bar_chart(
    bars: list[Bar], *, title: str, maximum: float | None = 1.0, unit: str = "", width: int = 640, row_height: int = 22
) -> str:
    """Horizontal bars, one row per item in the given order (a ranking reads top to bottom)."""
    if not bars:
        return empty_chart(title, "nothing to show yet", width)
    label_width, value_width = 180, 70
    height = row_height * len(bars) + 12
    top = max([b.value for b in bars] + [maximum or 0.0]) or 1.0
    x = LinearScale(0.0, top, label_width, width - value_width)
    drawing = Drawing(width, height, title)
    for index, bar in enumerate(bars):
        y = 6 + index * row_height
        label = bar.label if len(bar.label) <= 26 else bar.label[:25] + "…"
        drawing.text(label_width - 6, y + row_height * 0.65, label, text_anchor="end", font_size=12)
        tooltip = f"{bar.label}: {bar.value:.4g}{unit}" + (f" ({bar.note})" if bar.note else "")
        box = attrs(
            x=float(label_width),
            y=float(y + 3),
            width=max(x(bar.value) - label_width, 1.0),
            height=row_height - 6,
            fill=PALETTE[0],
            class_="bar",
        )
        rect = f"<rect {box}><title>{escape(tooltip)}</title></rect>"
        drawing.raw(f'<a href="{escape(bar.href, quote=True)}">{rect}</a>' if bar.href else rect)
        drawing.text(width - value_width + 6, y + row_height * 0.65, f"{bar.value:.3g}{unit}", font_size=12)
    return drawing.render()


@dataclass(frozen=True)
class TrendPoint:
    when: datetime
    value: float


def trend_chart(points: list[TrendPoint], *, title: str, y_label: str, width: int = 640, height: int = 200) -> str:
    """A value over time (evaluations per hour, a user's best score) as a line with a dot per point."""
    if not points:
        return empty_chart(title, "no activity yet", width)
    points = sorted(points, key=lambda p: p.when)
    margin = Margins()
    start, end = points[0].when.timestamp(), points[-1].when.timestamp()
    if end <= start:
        start, end = start - 1800.0, end + 1800.0
    x = LinearScale(start, end, margin.left, width - margin.right)
    top = max(p.value for p in points) or 1.0
    y = LinearScale(0.0, top * 1.1, height - margin.bottom, margin.top)
    drawing = Drawing(width, height, title)
    for tick in y.ticks(4):
        drawing.line(margin.left, y(tick), width - margin.right, y(tick), **GRID)
        drawing.text(margin.left - 6, y(tick) + 4, f"{tick:g}", text_anchor="end", font_size=11)
    drawing.text(
        14,
        margin.top + (height - margin.top - margin.bottom) / 2,
        y_label,
        font_size=11,
        transform=f"rotate(-90 14 {margin.top + (height - margin.top - margin.bottom) / 2:.0f})",
        text_anchor="middle",
    )
    _time_axis(drawing, x, height - margin.bottom, [p.when for p in points])
    drawing.add(
        "polyline",
        points=" ".join(f"{x(p.when.timestamp()):.1f},{y(p.value):.1f}" for p in points),
        fill="none",
        stroke=PALETTE[0],
        stroke_width=2,
        class_="trend",
    )
    for point in points:
        drawing.raw(
            marker(
                x(point.when.timestamp()),
                y(point.value),
                PALETTE[0],
                f"{point.when:%Y-%m-%d %H:%M}: {point.value:g}",
                radius=3,
            )
        )
    return drawing.render()


@dataclass(frozen=True)
class TimingSpread:
    """One workload's timed samples summarised, with the two references the score uses."""

    workload: str
    min_ms: float
    median_ms: float
    max_ms: float
    t_sol_ms: float | None = None
    t_baseline_ms: float | None = None


def timing_spread_chart(rows: list[TimingSpread], *, width: int = 640, row_height: int = 26) -> str:
    """Per workload a bar from the fastest to the slowest sample with a dot at the median, on a shared log
    time axis, and ticks at T_SOL (green) and T_b (orange) so the distance to each reads at a glance."""
    title = "Timing spread per workload"
    if not rows:
        return empty_chart(title, "no timed workload", width)
    label_width, margin_right = 150, 16
    height = row_height * len(rows) + 40
    values = [v for r in rows for v in (r.min_ms, r.max_ms, r.t_sol_ms, r.t_baseline_ms) if v]
    lo, hi = log_bounds(values, pad=1.5)
    x = LogScale(lo, hi, label_width, width - margin_right)
    drawing = Drawing(width, height, title)
    axis_y = row_height * len(rows) + 8
    for tick in x.ticks():
        drawing.line(x(tick), 4, x(tick), axis_y, **GRID)
        drawing.text(x(tick), axis_y + 14, milliseconds(tick), text_anchor="middle", font_size=11)
    drawing.text(
        width - margin_right,
        axis_y + 30,
        "● median  ▮ min–max  | T_SOL (green)  | T_b (orange)",
        text_anchor="end",
        font_size=10,
        class_="note",
    )
    for index, row in enumerate(rows):
        y = 4 + index * row_height + row_height / 2
        name = row.workload if len(row.workload) <= 20 else row.workload[:19] + "…"
        drawing.text(label_width - 6, y + 4, name, text_anchor="end", font_size=12)
        drawing.line(
            x(row.min_ms),
            y,
            x(row.max_ms),
            y,
            stroke=PALETTE[0],
            stroke_width=6,
            stroke_linecap="round",
            class_="spread",
            opacity=0.45,
        )
        for value, colour in ((row.t_sol_ms, PALETTE[2]), (row.t_baseline_ms, PALETTE[1])):
            if value:
                drawing.line(x(value), y - 9, x(value), y + 9, stroke=colour, stroke_width=2)
        tooltip = (
            f"{row.workload}: min {milliseconds(row.min_ms)}, median {milliseconds(row.median_ms)}, "
            f"max {milliseconds(row.max_ms)}"
        )
        drawing.raw(marker(x(row.median_ms), y, "#111827", tooltip, radius=4))
    return drawing.render()


def _log_axes(
    drawing: Drawing, x: LogScale, y: LogScale, margin: Margins, width: int, height: int, *, x_label: str, y_unit: str
) -> None:
    for tick in x.ticks():
        drawing.line(x(tick), margin.top, x(tick), height - margin.bottom, **GRID)
        drawing.text(x(tick), height - margin.bottom + 16, f"{tick:g}", text_anchor="middle", font_size=11)
    for tick in y.ticks():
        drawing.line(margin.left, y(tick), width - margin.right, y(tick), **GRID)
        drawing.text(margin.left - 6, y(tick) + 4, si(tick, y_unit), text_anchor="end", font_size=11)
    drawing.line(margin.left, height - margin.bottom, width - margin.right, height - margin.bottom, **AXIS)
    drawing.line(margin.left, margin.top, margin.left, height - margin.bottom, **AXIS)
    drawing.text((margin.left + width - margin.right) / 2, height - 8, x_label, text_anchor="middle", font_size=12)


def _score_axis(drawing: Drawing, y: LinearScale, margin: Margins, width: int) -> None:
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        drawing.line(margin.left, y(tick), width - margin.right, y(tick), **GRID)
        drawing.text(margin.left - 6, y(tick) + 4, f"{tick:g}", text_anchor="end", font_size=11)
    drawing.text(12, y(0.5) + 4, "S", font_size=12, class_="note")


def _time_axis(drawing: Drawing, x: LinearScale, baseline_y: float, moments: list[datetime]) -> None:
    """Date labels at a few evenly spaced times; a span under two days shows hours too."""
    drawing.line(x.start, baseline_y, x.end, baseline_y, **AXIS)
    span_s = x.hi - x.lo
    fmt = "%m-%d %H:%M" if span_s < 2 * 86400 else "%Y-%m-%d"
    zone = moments[0].tzinfo if moments else None
    step_s = next((s for s in TIME_STEPS_S if span_s / s <= 5), TIME_STEPS_S[-1])
    first = math.ceil(x.lo / step_s) * step_s
    for tick in (first + i * step_s for i in range(int((x.hi - first) // step_s) + 1)):
        if x.lo <= tick <= x.hi:
            drawing.line(x(tick), baseline_y, x(tick), baseline_y + 4, **AXIS)
            drawing.text(
                x(tick),
                baseline_y + 16,
                datetime.fromtimestamp(tick, zone).strftime(fmt),
                text_anchor="middle",
                font_size=11,
            )
