"""The Jinja2 environment of the pages: templates from this package, autoescaping, and the display filters.

Filters only format numbers the database holds (units picked at display time); charts arrive as
SVG text already escaped by `svg.py` and are marked safe by `chart`.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from solbench.service.web.svg import milliseconds, si

TEMPLATES = Path(__file__).resolve().parent / "templates"
STATIC = Path(__file__).resolve().parent / "static"
DASH = "—"


def format_score(value: float | None) -> str:
    return DASH if value is None else f"{value:.3f}"


def format_ms(value: float | None) -> str:
    return DASH if value is None else milliseconds(value)


def format_si(value: float | None, unit: str = "") -> str:
    return DASH if value is None else si(value, unit)


def format_when(value: datetime | None) -> str:
    """UTC minutes: every page shows the same clock whoever reads it."""
    return DASH if value is None else value.strftime("%Y-%m-%d %H:%M")


def format_day(value: datetime | None) -> str:
    return DASH if value is None else value.strftime("%Y-%m-%d")


def chart(svg_text: str) -> Markup:
    """SVG built by charts.py, whose text parts are escaped there."""
    return Markup(svg_text)


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(score=format_score, ms=format_ms, si=format_si, when=format_when, day=format_day)
    return env


def render(template: str, **context: object) -> str:
    """A page as HTML text; chart values (names ending in ``_chart`` or ``chart``) are SVG markup."""
    values = {
        key: chart(value) if key.endswith("chart") and isinstance(value, str) else value
        for key, value in context.items()
    }
    values.setdefault("harness_version", _harness_version())
    values.setdefault("viewer", None)  # the routes name the reader; a template rendered alone has none
    values.setdefault("here", "/")
    return environment().get_template(template).render(**values)


def _harness_version() -> str:
    from solbench.version import __version__

    return __version__
