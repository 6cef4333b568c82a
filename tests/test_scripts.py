"""scripts/: the GPU check runs only where a GPU is lent, rarely, so what it calls is checked here on every CI
run; the suite generators (build-suite, extract-suite) run into a scratch folder and must reproduce problems/."""

import json
import re
import runpy
import shutil
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


def _folder(root: Path, name: str, origin: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "definition.json").write_text(json.dumps({"name": folder.name, "tags": [f"origin:{origin}"]}))
    return folder


def _differ_from_shipped(folders: list[Path], problems: Path) -> list[str]:
    """Files of `folders` (under `problems`) that differ from the shipped problems/; empty when all are identical."""
    files = sorted(p for folder in folders for p in folder.rglob("*") if p.is_file())
    assert files, f"nothing written in {folders}"
    shipped = ROOT / "problems"
    return [str(p.relative_to(problems)) for p in files if not (shipped / p.relative_to(problems)).is_file()
            or (shipped / p.relative_to(problems)).read_bytes() != p.read_bytes()]


@pytest.mark.slow
def test_build_suite_regenerates_only_the_named_modules_into_the_problems_folder_beside_it(tmp_path):
    """A partial build writes its modules' folders and removes nothing: several modules write into one set."""
    script, problems = tmp_path / "scripts" / "build-suite", tmp_path / "problems"
    script.parent.mkdir()
    shutil.copy(ROOT / "scripts" / "build-suite", script)  # it writes to the problems/ beside its own folder
    stale = _folder(problems / "FIB", "no_recipe_makes_this", "recipe")
    extracted = _folder(problems / "FIB", "made_by_extract", "extract")
    other_set = _folder(problems / "L1", "not_rebuilt", "recipe")

    result = subprocess.run([sys.executable, str(script), "fib"], capture_output=True, text=True, cwd=tmp_path,
                            check=True)
    from solbench.suite.catalog import fib

    names = sorted(d.name for d in fib.drafts() if d.set == "FIB")  # fib.py also builds backward problems of L1
    assert result.stdout.strip() == f"wrote {len(fib.drafts())} problem folders under {problems}"
    assert sorted(p.name for p in (problems / "FIB").iterdir()) == sorted(names + [extracted.name, stale.name])
    assert stale.exists() and other_set.exists()
    assert _differ_from_shipped([problems / "FIB" / name for name in names], problems) == []


@pytest.mark.slow
def test_extract_suite_writes_what_is_shipped_and_removes_stale_folders_only_on_a_full_run(
        tmp_path, monkeypatch, capsys):
    import solbench.suite.catalog.extracted as catalog

    entry = next(e for e in catalog.EXTRACTIONS if (e.architecture, e.module, e.backward) == ("olmo2", "norm", False))
    monkeypatch.setattr(catalog, "EXTRACTIONS", [entry])  # a full run of a one-entry catalogue
    script, problems = tmp_path / "scripts" / "extract-suite", tmp_path / "problems"
    script.parent.mkdir()
    shutil.copy(ROOT / "scripts" / "extract-suite", script)
    recipe = _folder(problems / "L1", "made_by_a_recipe", "recipe")
    stale = _folder(problems / "L1", "no_entry_makes_this", "extract")

    monkeypatch.setattr(sys, "argv", [str(script), "no-such-model"])
    runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out.strip() == f"wrote 0 extracted problem folders under {problems}"
    assert stale.exists(), "a run limited to some words removed a folder it did not regenerate"

    monkeypatch.setattr(sys, "argv", [str(script)])
    runpy.run_path(str(script), run_name="__main__")
    captured = capsys.readouterr()
    assert captured.out.strip() == f"wrote 1 extracted problem folders under {problems}"
    assert not stale.exists() and recipe.exists()
    [written] = [p for p in (problems / "L1").iterdir() if p != recipe]
    assert captured.err.strip() == f"L1/{written.name}"
    assert _differ_from_shipped([written], problems) == []
