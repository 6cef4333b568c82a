"""The recipes' reference templates (suite_recipes/templates/): real Python files in the one template syntax, each
used by a recipe; and no recipe keeps a reference program as a string."""

import ast
import re
from pathlib import Path

import pytest

from suite_recipes import template
from suite_recipes.template import PLACEHOLDER, TEMPLATES, render

RECIPES = TEMPLATES.parent
TEMPLATE_FILES = sorted(str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob("*.py"))
RECIPE_MODULES = sorted(p for p in RECIPES.rglob("*.py") if TEMPLATES not in p.parents)


def test_every_template_parses_as_python():
    assert len(TEMPLATE_FILES) >= 20
    for name in TEMPLATE_FILES:
        ast.parse((TEMPLATES / name).read_text(), filename=name)


def test_a_linter_reads_every_template_and_finds_only_what_placeholders_leave_open():
    """pyflakes reports nothing but names a placeholder defines or uses (undefined names, unused imports and
    variables): no redefinitions, no syntax errors, nothing else a linter would stop."""
    checker = pytest.importorskip("pyflakes.checker")
    messages = pytest.importorskip("pyflakes.messages")
    allowed = (messages.UndefinedName, messages.UnusedImport, messages.UnusedVariable)
    found = []
    for name in TEMPLATE_FILES:
        result = checker.Checker(ast.parse((TEMPLATES / name).read_text()), filename=name)
        found += [str(m) for m in result.messages if not isinstance(m, allowed)]
    assert found == []


def _string_constants(path: Path) -> set[str]:
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_every_template_is_named_by_a_recipe_and_every_name_exists():
    named = {
        s for path in RECIPE_MODULES for s in _string_constants(path) if re.fullmatch(r"[a-z0-9_]+/[a-z0-9_]+\.py", s)
    }
    assert sorted(named) == TEMPLATE_FILES


def test_no_recipe_keeps_a_reference_program_as_a_string():
    """References live in templates; a recipe passes values (numbers, argument lists, a line or two of code)."""
    programs = [
        f"{path.relative_to(RECIPES)}: {s.splitlines()[0][:60]!r}"
        for path in RECIPE_MODULES
        for s in _string_constants(path)
        if re.search(r"^(def run\(|import torch)", s, re.MULTILINE)
    ]
    assert programs == []


def test_render_fills_names_repr_values_and_whole_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(template, "TEMPLATES", tmp_path)
    template.template_text.cache_clear()
    (tmp_path / "t.py").write_text("EPS = __EPS__\n\n\ndef run(x__EXTRA_ARGS__):\n    __PRE__\n    return __BODY__\n")
    assert (
        render("t.py", EPS=1e-05, EXTRA_ARGS=", y", PRE="", BODY="x * EPS")
        == "EPS = 1e-05\n\n\ndef run(x, y):\n    return x * EPS\n"
    )
    assert render("t.py", EPS=True, EXTRA_ARGS="", PRE="    x = x + 1\n", BODY="x").splitlines()[4] == "    x = x + 1"
    with pytest.raises(ValueError, match=r"templates/t.py: no value for BODY; no placeholder for OTHER"):
        render("t.py", EPS=1, EXTRA_ARGS="", PRE="", OTHER=2)
    with pytest.raises(ValueError, match=r"__PRE__ stands for whole lines"):
        render("t.py", EPS=1, EXTRA_ARGS="", PRE="x = 1", BODY="x")
    template.template_text.cache_clear()


def test_placeholders_are_upper_case_names_in_double_underscores():
    assert PLACEHOLDER.findall("a = __EPS__ + b__SCALE_ARG__ + __init__ + __X2__") == ["EPS", "SCALE_ARG", "X2"]
