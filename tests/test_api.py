"""The public API: light to import, the README's snippet works as written, the same defaults as the CLI."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_python_snippet() -> str:
    """The Python API section's snippet (the optimisation environment's has its own section and docs page)."""
    snippets = re.findall(r"```python\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)
    [snippet] = [s for s in snippets if "solbench.evaluate(" in s]
    return snippet


def test_import_solbench_is_light_and_exposes_the_api():
    code = ("import sys, solbench\nassert 'torch' not in sys.modules and 'solbench.api' not in sys.modules\n"
            "names = [n for n in solbench.__all__ if n != '__version__']\n"
            "assert all(callable(getattr(solbench, n)) for n in names), names\n"
            "assert 'torch' not in sys.modules\nprint(sorted(names))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(sorted(["Budget", "EvaluationConfig", "analyze", "evaluate", "load_problem",
                                                 "load_solution", "make", "score"]))


def test_the_verbs_are_plain_functions_with_their_own_signatures():
    """No package shares a verb's name (the layers are nouns: evaluation, scoring), so `solbench.evaluate` is the
    API's function whatever was imported before, and help() and type checkers see its parameters."""
    import inspect

    import solbench
    import solbench.evaluation
    import solbench.scoring
    from solbench import api

    for verb in ("evaluate", "score", "analyze", "load_problem", "load_solution"):
        function = getattr(solbench, verb)
        assert function is getattr(api, verb) and inspect.isfunction(function)
        assert "args" not in inspect.signature(function).parameters
    assert list(inspect.signature(solbench.evaluate).parameters)[:3] == ["problem", "solution", "config"]


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
    result = subprocess.run([sys.executable, "-c", _readme_python_snippet()], cwd=ROOT, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.strip().splitlines()[-1]
    assert printed.startswith("['PASSED', 'PASSED', 'PASSED', 'PASSED'] ["), printed
    assert 0 < float(printed.rsplit("] ", 1)[1]) < 1, printed
