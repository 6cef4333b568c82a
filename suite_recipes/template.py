"""The one template syntax of the recipes: a reference template is a real Python file under ``templates/``.

A placeholder is an upper-case name between double underscores, ``__EPS__`` or ``__ACTIVATION__``, written where
the value goes: as a name in an expression (``x + __EPS__``), or at the end of a name (``enable_gqa=True__SCALE_ARG__``)
for a fragment that may be empty. A placeholder alone on its line stands for whole lines: its value (lines each
ending in a newline, or nothing) replaces that line, indentation included (``__MAKE_INPUTS__`` for a generated
function; an optional statement). So every template parses as Python and a linter reads it: what pyflakes reports
there is only what placeholders leave open (undefined names, unused imports and variables;
tests/suite/test_templates.py checks both). `render` fills every placeholder: a ``str``
value is inserted as it is (code), any other value as its ``repr`` (``1e-05``, ``True``, ``128``).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).resolve().parent / "templates"
PLACEHOLDER = re.compile(r"__([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)__")
_FILL = re.compile(r"^[ \t]*__(?P<line>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)__[ \t]*\n|" + PLACEHOLDER.pattern, re.MULTILINE)
"""One pass over the template: a placeholder alone on its line (group ``line``), or anywhere else (group 2)."""


@cache
def template_text(name: str) -> str:
    """The template ``templates/<name>`` (``l1/rmsnorm.py``)."""
    return (TEMPLATES / name).read_text(encoding="utf-8")


def placeholders(name: str) -> set[str]:
    return set(PLACEHOLDER.findall(template_text(name)))


def render(name: str, **values: Any) -> str:
    """The template with every placeholder filled; a placeholder without a value, or a value without a
    placeholder, is an error (a renamed placeholder cannot go unnoticed)."""
    wanted = placeholders(name)
    missing, unused = sorted(wanted - set(values)), sorted(set(values) - wanted)
    if missing or unused:
        raise ValueError(
            f"templates/{name}: "
            + "; ".join(
                part
                for part in (
                    f"no value for {', '.join(missing)}" if missing else "",
                    f"no placeholder for {', '.join(unused)}" if unused else "",
                )
                if part
            )
        )
    return _FILL.sub(
        lambda m: _lines(name, m["line"], values[m["line"]]) if m["line"] else _text(values[m[2]]), template_text(name)
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def _lines(name: str, placeholder: str, value: Any) -> str:
    if not isinstance(value, str) or (value and not value.endswith("\n")):
        raise ValueError(
            f"templates/{name}: __{placeholder}__ stands for whole lines: give lines ending in a "
            f"newline, or nothing (got {value!r:.60})"
        )
    return value
