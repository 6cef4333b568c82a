"""The GPU check runs only where a GPU is lent, rarely: what it calls is checked here, on every CI run."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEVICE_CHECK = ROOT / "scripts" / "device-check"


@pytest.mark.parametrize("script", ["device-check", "device-wheels", "build-suite", "extract-suite"])
def test_shell_scripts_parse(script):
    path = ROOT / "scripts" / script
    if path.read_text().startswith("#!/usr/bin/env bash"):
        subprocess.run(["bash", "-n", str(path)], check=True)


def _flags(command: list[str]) -> str:
    return subprocess.run([sys.executable, *command, "--help"], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout


@pytest.mark.slow
def test_device_check_calls_only_existing_flags_and_files():
    text = DEVICE_CHECK.read_text()
    for path in re.findall(r"\b((?:examples|benchmarks)/[\w/.-]+)", text):
        assert (ROOT / path).exists(), path
    validity = re.search(r"benchmarks/sol_validity\.py([^>\n]*)", text).group(1)
    validity_help = _flags(["benchmarks/sol_validity.py"])
    for flag in re.findall(r"--[\w-]+", validity):
        assert flag in validity_help, flag
    evaluate = re.search(r"-m solbench eval ([^>\n]*)", text).group(1)
    eval_help = _flags(["-m", "solbench", "eval"])
    for flag in re.findall(r"--[\w-]+", evaluate):
        assert flag in eval_help, flag
