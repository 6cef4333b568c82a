"""The public API: light to import, the README's snippet works as written, the same defaults as the CLI."""

import re
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_python_snippet() -> str:
    """The Python API section's snippet (the optimisation environment's has its own section and docs page)."""
    snippets = re.findall(r"```python\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)
    [snippet] = [s for s in snippets if "solbench.evaluate(" in s]
    return snippet


def test_import_solbench_is_light_and_exposes_the_api():
    code = (
        "import sys, solbench\nassert 'torch' not in sys.modules and 'solbench.api' not in sys.modules\n"
        "names = [n for n in solbench.__all__ if n != '__version__']\n"
        "assert all(callable(getattr(solbench, n)) for n in names), names\n"
        "assert 'torch' not in sys.modules\nprint(sorted(names))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(
        sorted(
            [
                "Budget",
                "EvaluationConfig",
                "analyze",
                "baseline",
                "connect",
                "evaluate",
                "load_problem",
                "load_solution",
                "make",
                "run_suite",
                "score",
            ]
        )
    )


def test_the_verbs_are_plain_functions_with_their_own_signatures():
    """No package shares a verb's name (the layers are nouns: evaluation, scoring), so `solbench.evaluate` is the
    API's function whatever was imported before, and help() and type checkers see its parameters."""
    import inspect

    import solbench
    import solbench.evaluation
    import solbench.scoring
    from solbench import api

    for verb in ("evaluate", "score", "analyze", "load_problem", "load_solution", "run_suite", "baseline"):
        function = getattr(solbench, verb)
        assert function is getattr(api, verb) and inspect.isfunction(function)
        assert "args" not in inspect.signature(function).parameters
    assert list(inspect.signature(solbench.evaluate).parameters)[:3] == ["problem", "solution", "config"]
    assert list(inspect.signature(solbench.run_suite).parameters)[:3] == ["suite", "solution_name", "categories"]
    assert list(inspect.signature(solbench.baseline).parameters)[:3] == ["suite", "output", "hardware"]


@pytest.mark.parametrize(
    "verb, workflow",
    [
        ("run_suite", "solbench.runner.suite_run:run_suite"),
        ("baseline", "solbench.runner.baseline_measurement:measure_baselines"),
    ],
)
def test_run_suite_and_baseline_take_the_runner_workflows_parameters_and_defaults(verb, workflow):
    """The API's verbs over the runner's workflows name the same parameters, in order, with the same defaults
    (which `solbench run` and `solbench baseline` show too)."""
    import importlib
    import inspect

    import solbench

    module, name = workflow.split(":")
    ours, theirs = (
        inspect.signature(f).parameters
        for f in (getattr(solbench, verb), getattr(importlib.import_module(module), name))
    )
    assert list(ours) == list(theirs)
    assert [(p.kind, p.default) for p in ours.values()] == [(p.kind, p.default) for p in theirs.values()]


def test_analyze_and_load_accept_paths():
    import solbench

    problem = solbench.load_problem(ROOT / "examples" / "rmsnorm")
    by_path = solbench.analyze(str(ROOT / "examples" / "rmsnorm"), hardware="H100_SXM")
    by_object = solbench.analyze(problem, hardware="H100_SXM")
    assert [w.t_sol_ms for w in by_path] == [w.t_sol_ms for w in by_object]
    assert len(by_path) == len(problem.workloads) and all(w.t_sol_ms > 0 for w in by_path)


def test_bad_input_raises_solbench_errors_naming_what_is_wrong(tmp_path):
    import solbench
    from solbench.errors import SolbenchError

    with pytest.raises(SolbenchError, match="not a problem directory|definition.json"):
        solbench.load_problem(tmp_path)
    with pytest.raises(SolbenchError, match="NO_SUCH_GPU"):
        solbench.analyze(ROOT / "examples" / "rmsnorm", hardware="NO_SUCH_GPU")


@pytest.mark.slow
def test_readme_snippet_runs_as_written_and_prints_passed_traces(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", _readme_python_snippet()], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr
    printed = result.stdout.strip().splitlines()[-1]
    assert printed.startswith("['PASSED', 'PASSED', 'PASSED', 'PASSED'] ["), printed
    assert 0 < float(printed.rsplit("] ", 1)[1]) < 1, printed


def _fast_config():
    """What `--device cpu --rounds 1 --budget 0.01` makes of the CLI's defaults."""
    from dataclasses import replace

    from solbench import EvaluationConfig

    defaults = EvaluationConfig()
    return replace(defaults, device="cpu", rounds=1, timing=replace(defaults.timing, budget_s=0.01))


FAST_FLAGS = ["--device", "cpu", "--rounds", "1", "--budget", "0.01"]


@pytest.fixture
def one_problem_suite(tmp_path) -> Path:
    from conftest import VECTOR_ADD, vector_workloads, write_problem

    write_problem(
        tmp_path / "suite" / "L1" / "vector_add", {**VECTOR_ADD, "tags": ["set:L1"]}, vector_workloads(1000, 3000)
    )
    return tmp_path / "suite"


def _cli(*args: str):
    from typer.testing import CliRunner

    from solbench.cli.app import app

    return CliRunner().invoke(app, list(map(str, args)))


@pytest.mark.slow
def test_run_suite_returns_the_summary_solbench_run_writes_and_reports_progress(
    one_problem_suite, tmp_path, probed_home
):
    import json

    import solbench
    from solbench.runner.progress import JobDone, Started

    events = []
    run = solbench.run_suite(
        str(one_problem_suite), out=tmp_path / "api", config=_fast_config(), progress=events.append
    )
    assert run.summary.hardware == "local" and not run.failed and run.summary_path == tmp_path / "api" / "summary.json"
    assert [(p.set, p.problem, p.solution, p.result.passed, p.result.workloads) for p in run.summary.problems] == [
        ("L1", "vector_add", "reference", 2, 2)
    ]
    assert json.loads(run.summary_path.read_text()) == run.summary.as_json()
    started, done = events
    assert isinstance(started, Started) and started.out == tmp_path / "api" and started.hardware == "local"
    assert isinstance(done, JobDone) and (done.done, done.total) == (1, 1) and done.result.statuses == {"PASSED": 2}

    fresh = _cli("run", one_problem_suite, "-o", tmp_path / "cli", *FAST_FLAGS)
    assert fresh.exit_code == 0, fresh.output
    measured = ("score", "latency_ms")  # timings differ from run to run; everything else is the same
    cli_summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert [{k: v for k, v in p.items() if k not in measured} for p in cli_summary["problems"]] == [
        {k: v for k, v in p.items() if k not in measured} for p in run.summary.as_json()["problems"]
    ]
    assert {**cli_summary, "problems": [], "sets": []} == {**run.summary.as_json(), "problems": [], "sets": []}

    resumed = _cli("run", one_problem_suite, "-o", tmp_path / "api", *FAST_FLAGS)  # the API's run folder
    assert resumed.exit_code == 0 and "L1/vector_add/reference · already done" in resumed.stderr, resumed.output
    assert json.loads(run.summary_path.read_text()) == run.summary.as_json()


def test_baseline_returns_what_solbench_baseline_writes(one_problem_suite, tmp_path, probed_home):
    import json

    import solbench
    from solbench.runner.progress import Started

    events = []
    measurement = solbench.baseline(
        one_problem_suite,
        output=str(tmp_path / "api.json"),
        compile_reference=False,
        work=tmp_path / "work",
        config=_fast_config(),
        progress=events.append,
    )
    assert [(b.definition, b.hardware, b.source) for b in measurement.measured] == [
        ("vector_add", "local", "reference (eager)")
    ] * 2 and not measurement.missing
    assert isinstance(events[0], Started) and events[0].solutions == ("reference",)
    written = json.loads((tmp_path / "api.json").read_text())["baselines"]
    assert written == [b.model_dump() for b in measurement.baselines.entries()]

    cli = _cli(
        "baseline",
        one_problem_suite,
        "-o",
        tmp_path / "cli.json",
        "--no-compile",
        "--work",
        tmp_path / "work",
        *FAST_FLAGS,
    )  # the API's work folder: the same traces, so the same latencies
    assert cli.exit_code == 0 and "already done" in cli.stderr and "holds 2" in cli.stderr, cli.output
    assert json.loads((tmp_path / "cli.json").read_text())["baselines"] == written


def test_run_suite_and_baseline_raise_for_bad_input_before_anything_runs(one_problem_suite, tmp_path, isolated_cache):
    import solbench
    from solbench.runner.errors import NoProblemsMatch, RunOptionError

    run = partial(solbench.run_suite, one_problem_suite, out=tmp_path / "run")
    with pytest.raises(NoProblemsMatch, match=r"no problems match \(categories \['Quant'\], names any\)"):
        run(categories=["Quant"])
    with pytest.raises(RunOptionError, match="warm_sandboxes") as conflict:
        run(broker="redis://nowhere:1", warm_sandboxes=True)
    assert conflict.value.conflicts_with == "broker"
    with pytest.raises(RunOptionError, match="workers: 0: must be"):
        run(workers=0)
    with pytest.raises(RunOptionError, match="unknown tier 'huge'"):
        run(tier="huge")
    with pytest.raises(NoProblemsMatch):
        solbench.baseline(one_problem_suite, output=tmp_path / "b.json", names=["nothing"], work=tmp_path / "work")
    assert not (isolated_cache / "hardware").exists() and not list(tmp_path.glob("*.json"))
    assert not (tmp_path / "run").exists() and not (tmp_path / "work").exists()


def test_the_cli_tells_the_runner_option_errors_with_its_flags(one_problem_suite):
    def solbench(*args):
        return subprocess.run(
            [sys.executable, "-m", "solbench", *map(str, args)], capture_output=True, text=True, timeout=120
        )

    result = solbench("run", one_problem_suite, "--broker", "redis://nowhere:1", "--warm-sandboxes")
    assert result.returncode == 2 and result.stderr.strip() == (
        "solbench: error: --warm-sandboxes: spares are kept by local worker processes; with --broker the remote "
        "`solbench worker`s run the jobs"
    ), result.stderr
    result = solbench("baseline", one_problem_suite, "-o", "b.json", "--name", "nothing")
    assert result.returncode == 2 and result.stderr.strip().endswith(f"{one_problem_suite}: no problems match")


def test_the_facades_all_lists_exactly_the_lazily_imported_names():
    import solbench

    assert solbench.__all__ == ["__version__", *solbench._API, *solbench._OPTIMIZE, *solbench._SERVICE]
