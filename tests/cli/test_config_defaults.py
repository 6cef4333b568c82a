"""One set of evaluation defaults: every command with no options runs EvaluationConfig()'s."""

import subprocess
import sys
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from solbench.cli.app import app
from solbench.evaluation import EvaluationConfig


class _Captured(Exception):
    pass


@pytest.fixture
def captured(monkeypatch):
    """Stops a command where it would start evaluating and keeps the config it built."""
    configs = []

    def stop_with(config):
        configs.append(config)
        raise _Captured

    from solbench.cli import eval_command
    from solbench.runner import pool

    monkeypatch.setattr(
        eval_command, "_evaluate_with_progress", lambda problem, solution, config, *_: stop_with(config)
    )
    monkeypatch.setattr(pool, "run_jobs", lambda jobs, settings, **_: stop_with(settings.config))
    return configs


@pytest.mark.parametrize("command", ["eval", "run", "baseline"])
def test_commands_without_options_use_the_config_defaults(
    command, vector_add_problem, tmp_path, captured, probed_home, monkeypatch
):
    for name, value in probed_home.items():
        monkeypatch.setenv(name, value)
    arguments = {
        "eval": ["eval", str(vector_add_problem), "--reference"],
        "run": ["run", str(vector_add_problem), "-o", str(tmp_path / "run")],
        "baseline": ["baseline", str(vector_add_problem), "-o", str(tmp_path / "b.json")],
    }[command]
    result = CliRunner().invoke(app, arguments)
    assert isinstance(result.exception, _Captured), result.output
    expected = EvaluationConfig().resolved()
    if command == "baseline":
        expected = replace(expected, time_reference=False)  # a baseline times the candidates, not the reference
    assert captured == [expected]


def test_options_replace_only_what_they_name(vector_add_problem, captured):
    result = CliRunner().invoke(
        app,
        [
            "eval",
            str(vector_add_problem),
            "--reference",
            "--budget",
            "0.25",
            "--memory-limit-gb",
            "2",
            "--device",
            "cpu",
        ],
    )
    assert isinstance(result.exception, _Captured), result.output
    defaults = EvaluationConfig()
    assert captured == [
        replace(defaults, device="cpu", timing=replace(defaults.timing, budget_s=0.25), memory_limit_bytes=2 << 30)
    ]


def test_help_shows_the_config_defaults():
    defaults = EvaluationConfig()
    text = CliRunner().invoke(app, ["eval", "--help"], terminal_width=200).output
    for default in (defaults.rounds, defaults.timing.budget_s, defaults.timeout_s):
        assert f"[default: {default}]" in text


@pytest.mark.slow
def test_the_default_device_is_resolved_when_used_not_when_built():
    code = (
        "import sys; from solbench.evaluation import EvaluationConfig; c = EvaluationConfig(); "
        "assert c.device == 'auto' and 'torch' not in sys.modules; "
        "assert c.resolved().device in ('cpu', 'cuda') and 'torch' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize(
    "command, workflow, renamed",
    [
        ("run", "solbench.runner.suite_run:run_suite", {"category": "categories", "name": "names"}),
        (
            "baseline",
            "solbench.runner.baseline_measurement:measure_baselines",
            {"category": "categories", "name": "names", "solution_name": "solution_names"},
        ),
    ],
)
def test_run_and_baseline_options_default_to_the_library_workflows(command, workflow, renamed):
    """Every option of `solbench run` / `baseline` that is a parameter of the runner's workflow has its default."""
    import importlib
    import inspect

    import typer.main

    module, name = workflow.split(":")
    library = inspect.signature(getattr(importlib.import_module(module), name)).parameters
    options = {param.name: param.default for param in typer.main.get_command(app).commands[command].params}
    shared = {option: renamed.get(option, option) for option in options if renamed.get(option, option) in library}
    assert len(shared) >= 10, shared
    for option, parameter in shared.items():
        expected = library[parameter].default
        if expected is inspect.Parameter.empty:  # a required parameter (baseline's output) is a required option
            assert options[option] is None or options[option] is ..., option
            continue
        assert options[option] == (list(expected) if isinstance(expected, tuple) else expected), option
