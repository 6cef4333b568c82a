"""One CLI vocabulary: a flag means the same thing with the same default in every command, help fits 80 columns."""

import os
import subprocess
import sys

import pytest
import typer

from solbench.cli.app import app


def _commands():
    root = typer.main.get_command(app)
    for name, command in root.commands.items():
        for sub_name, sub in getattr(command, "commands", {name: command}).items():
            yield (name if sub is command else f"{name} {sub_name}"), sub


def _options_by_flag():
    seen = {}
    for name, command in _commands():
        for parameter in command.params:
            for flag in parameter.opts:
                seen.setdefault(flag, []).append((name, parameter))
    return seen


def test_short_flags_have_one_long_name_everywhere():
    for flag, uses in _options_by_flag().items():
        if len(flag) == 2 and flag != "-h":
            longs = {next(o for o in p.opts if o.startswith("--")) for _, p in uses}  # the first is the name
            assert len(longs) == 1, f"{flag} means {longs} in {[n for n, _ in uses]}"
    assert all("--output" in p.opts for _, p in _options_by_flag()["-o"])


@pytest.mark.parametrize("flag", ["--budget", "--rounds", "--timeout", "--device", "--workers", "--hardware"])
def test_an_evaluation_flag_has_one_default_in_every_command(flag):
    from solbench.cli.common import DEFAULTS

    uses = _options_by_flag()[flag]
    if flag == "--rounds":  # optimize's --rounds counts its agent's rounds (issue 15 names it so): not an evaluation
        uses = [(n, p) for n, p in uses if n != "optimize"]  # flag; its correctness rounds are --correctness-rounds
    if flag == "--hardware":  # validate's T_SOL checks need some GPU spec; it says so in its help (H200)
        uses = [(n, p) for n, p in uses if n != "validate"]
    defaults = {(p.default if p.default != [] else None) for _, p in uses if not p.required}
    assert len(defaults) <= 1, f"{flag} defaults differ: {[(n, p.default) for n, p in uses]}"
    expected = {"--budget": DEFAULTS.timing.budget_s, "--rounds": DEFAULTS.rounds, "--timeout": DEFAULTS.timeout_s}
    if flag in expected:
        assert defaults == {expected[flag]}


def _run(*args):
    return subprocess.run(
        [sys.executable, "-m", "solbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "80", "TERM": "dumb"},
    )


def test_help_wraps_at_80_columns_as_paragraphs():
    result = _run("--help")
    assert result.returncode == 0
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    score_line = next(i for i, line in enumerate(result.stdout.splitlines()) if "│ score " in line)
    text = " ".join(line.strip("│ ") for line in result.stdout.splitlines()[score_line : score_line + 4])
    assert "T_b from --baselines or the reference timed" in " ".join(text.split()), text


def test_hw_list_prints_whole_ids_at_80_columns():
    from solbench.hardware import known_ids

    result = _run("hw", "list")
    assert result.returncode == 0
    cells = {cell.strip() for line in result.stdout.splitlines() for cell in line.split("│")}
    assert set(known_ids()) <= cells, set(known_ids()) - cells
