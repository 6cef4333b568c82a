"""`solbench template` as a real process: the instructions, a template that passes as written, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RMSNORM = Path(__file__).resolve().parents[2] / "examples" / "rmsnorm"


def solbench(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent"], "solbench: error: /nonexistent: not a problem directory"),
        ([RMSNORM, "--language", "cutlass"], "no template for language 'cutlass' (templates: pytorch, triton, cpp"),
        ([RMSNORM, "--language", "pytorch", "--style", "inplace"], "no template for style 'inplace'"),
        ([RMSNORM, "-o", "/nonexistent/solution.json"], "-o /nonexistent/solution.json: cannot write"),
    ],
    ids=["problem", "language", "style", "output"],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = solbench("template", *args, "--device", "cpu")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_without_a_language_it_prints_the_instructions():
    result = solbench("template", RMSNORM, "--device", "cpu")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# Writing a solution of rmsnorm_fp32_h2048\n")
    assert "`run(hidden_states, weight, eps, output) -> None`" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("style", ["value", "dps"])
def test_a_pytorch_template_written_by_the_command_passes_every_workload(tmp_path, style, isolated_cache):
    written = solbench(
        "template", RMSNORM, "--language", "pytorch", "--style", style, "--device", "cpu", "-o", "t.json", cwd=tmp_path
    )
    assert written.returncode == 0 and written.stderr == "wrote t.json\n", written.stderr
    assert json.loads((tmp_path / "t.json").read_text())["spec"]["destination_passing_style"] == (style == "dps")
    options = ["--device", "cpu", "--rounds", "1", "--budget", "0.02", "--json"]
    evaluated = solbench("eval", RMSNORM, "--solution", tmp_path / "t.json", *options, cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr
    assert [trace["evaluation"]["status"] for trace in json.loads(evaluated.stdout)] == ["PASSED"] * 4
