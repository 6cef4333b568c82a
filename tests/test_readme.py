"""The README's two commands are the ones CI runs, and its example evaluation works as written."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_ci_runs_the_readme_test_command_after_the_readme_setup():
    setup, test = _readme_commands()[:2]
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.strip().splitlines()[-1] == test
    for step in setup.split(" && ")[:-1]:
        assert step in ci, step


@pytest.mark.slow
def test_readme_example_evaluation_passes():
    setup = _readme_commands()[0]
    command = setup.split(" && ")[-1].replace(".venv/bin/solbench", f"{sys.executable} -m solbench")
    result = subprocess.run(command.split() + ["--json"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('"status": "PASSED"') == 4
