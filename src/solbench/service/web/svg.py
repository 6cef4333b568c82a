"""SVG building blocks for the server-drawn charts: scales, tick marks, number labels and an element list.

Everything here is pure: values in, markup text out. Text is escaped once, here, so a user name or a
workload uuid can never inject markup into a page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

PALETTE = ("#2563eb", "#d97706", "#059669", "#dc2626", "#7c3aed", "#0891b2", "#be185d", "#4d7c0f")
"""Marker colours, chosen to stay distinct on white and when printed in grey."""

SI_PREFIXES = (
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
)


def si(value: float, unit: str = "") -> str:
    """A number with an SI prefix and three significant digits: 1.23 TFLOP/s, 45.6 µs."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}".strip()
    for factor, prefix in SI_PREFIXES:
        if abs(value) >= factor * 0.9995:
            return f"{value / factor:.3g} {prefix}{unit}".strip()
    factor, prefix = SI_PREFIXES[-1]
    return f"{value / factor:.3g} {prefix}{unit}".strip()


def milliseconds(value_ms: float) -> str:
    """A duration given in milliseconds, shown in the unit that fits it (s, ms, µs, ns)."""
    return si(value_ms / 1000.0, "s")


@dataclass(frozen=True)
class LinearScale:
    """Maps [lo, hi] of the data onto [start, end] pixels (end may be below start: SVG's y grows down)."""

    lo: float
    hi: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        span = self.hi - self.lo or 1.0
        return self.start + (value - self.lo) / span * (self.end - self.start)

    def ticks(self, count: int = 5) -> list[float]:
        return nice_ticks(self.lo, self.hi, count)


@dataclass(frozen=True)
class LogScale:
    """A base-10 logarithmic scale; lo and hi must be positive."""

    lo: float
    hi: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        low, high = math.log10(self.lo), math.log10(self.hi)
        span = high - low or 1.0
        return self.start + (math.log10(max(value, 1e-300)) - low) / span * (self.end - self.start)

    def ticks(self, count: int = 6) -> list[float]:
        first, last = math.floor(math.log10(self.lo)), math.ceil(math.log10(self.hi))
        step = max(1, math.ceil((last - first) / count))
        return [10.0**power for power in range(first, last + 1, step) if self.lo <= 10.0**power <= self.hi]


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks, value = [], first
    while value <= hi + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


def log_bounds(values: list[float], pad: float = 2.0) -> tuple[float, float]:
    """Bounds for a log axis holding every positive value, widened by `pad` on each side."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    if not positive:
        return 1.0, 10.0
    lo, hi = min(positive) / pad, max(positive) * pad
    return (lo, hi) if hi > lo else (lo / 10, hi * 10)


def attrs(**values: object) -> str:
    """XML attributes from keyword arguments (class_ → class, stroke_width → stroke-width); None is left out."""
    parts = []
    for key, value in values.items():
        if value is None:
            continue
        name = key.rstrip("_").replace("_", "-")
        text = f"{value:.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)
        parts.append(f'{name}="{escape(text, quote=True)}"')
    return " ".join(parts)


@dataclass
class Drawing:
    """An SVG document built element by element; `render` returns the markup."""

    width: int
    height: int
    title: str
    elements: list[str] = field(default_factory=list)

    def add(self, tag: str, text: str | None = None, /, **values: object) -> None:
        inner = "" if text is None else escape(text)
        self.elements.append(
            f"<{tag} {attrs(**values)}>{inner}</{tag}>" if text is not None else f"<{tag} {attrs(**values)}/>"
        )

    def raw(self, markup: str) -> None:
        """Markup the caller built from escaped parts (a group, a link around a marker)."""
        self.elements.append(markup)

    def line(self, x1: float, y1: float, x2: float, y2: float, **style: object) -> None:
        self.add("line", x1=x1, y1=y1, x2=x2, y2=y2, **style)

    def text(self, x: float, y: float, text: str, **style: object) -> None:
        self.add("text", text, x=x, y=y, **style)

    def render(self, css_class: str = "chart") -> str:
        body = "".join(self.elements)
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" {attrs(class_=css_class, role="img")} '
            f'viewBox="0 0 {self.width} {self.height}" width="{self.width}" height="{self.height}" '
            f'aria-label="{escape(self.title, quote=True)}"><title>{escape(self.title)}</title>{body}</svg>'
        )


def marker(x: float, y: float, colour: str, tooltip: str, href: str | None = None, radius: float = 4.5) -> str:
    """A dot with a hover title, wrapped in a link when it has somewhere to go."""
    dot = (
        f"<circle {attrs(cx=x, cy=y, r=radius, fill=colour, class_='marker')}><title>{escape(tooltip)}</title></circle>"
    )
    return f'<a href="{escape(href, quote=True)}">{dot}</a>' if href else dot


def empty_chart(title: str, message: str, width: int = 640, height: int = 120) -> str:
    """The chart a page shows when there is nothing to draw yet, instead of a blank."""
    drawing = Drawing(width, height, title)
    drawing.add("rect", x=0.5, y=0.5, width=width - 1, height=height - 1, class_="frame")
    drawing.text(width / 2, height / 2, message, text_anchor="middle", class_="empty")
    return drawing.render()
