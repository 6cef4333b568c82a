"""scripts/: the GPU check runs only where a GPU is lent, rarely, so what it calls is checked here on every CI
run; the suite generators (build-suite, extract-suite) run into a scratch folder and must reproduce problems/."""

import json
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from solbench.suite.build import write_generated
from solbench.suite.draft import ModelRef, ProblemDraft
from solbench.suite.extract.provenance import PROVENANCE_KEY, installed_versions, recorded_versions

ROOT = Path(__file__).resolve().parents[1]
DEVICE_CHECK = ROOT / "scripts" / "device-check"


@pytest.mark.parametrize("script", ["device-check", "device-wheels", "build-suite", "extract-suite", "dependencies"])
def test_shell_scripts_parse(script):
    path = ROOT / "scripts" / script
    if path.read_text().startswith("#!/usr/bin/env bash"):
        subprocess.run(["bash", "-n", str(path)], check=True)


def _flags(command: list[str]) -> str:
    return subprocess.run(
        [sys.executable, *command, "--help"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout


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


_WITHOUT_SERVICE_PACKAGES = """
import sys
class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"fastapi", "sqlalchemy", "alembic", "uvicorn", "celery", "redis", "psycopg", "mcp"}:
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, _Missing())
"""


def _gpu_test_ids(files: list[str], env: dict[str, str] | None = None) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "gpu", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return {line for line in done.stdout.splitlines() if "::" in line}


@pytest.mark.slow
def test_device_check_runs_every_gpu_test_on_an_image_without_the_service_packages(tmp_path):
    """The GPU image lacks fastapi and sqlalchemy: a collection of all of tests/ stops there before any GPU test ran
    (it did), so the script collects only the files its grep selects, and those must hold every GPU test."""
    grep = re.search(r"<\(grep (.+?) \| sort\)", DEVICE_CHECK.read_text()).group(1)
    files = subprocess.run(f"grep {grep}", shell=True, capture_output=True, text=True, cwd=ROOT).stdout.split()
    assert files
    (tmp_path / "sitecustomize.py").write_text(_WITHOUT_SERVICE_PACKAGES)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "src")])}
    selected = _gpu_test_ids(files, env)
    assert selected == _gpu_test_ids(["tests"])


def _folder(root: Path, name: str, origin: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "definition.json").write_text(json.dumps({"name": folder.name, "tags": [f"origin:{origin}"]}))
    return folder


def _as_if_extracted_here(shipped: bytes, name: str) -> bytes:
    """A shipped definition.json with the library versions it records replaced by the installed ones.

    An extracted problem names the transformers and torch it was made with (tags and description); a
    run with other versions differs there and nowhere else unless the libraries changed the reference,
    which is what the freshness test is for.
    """
    if name == "provenance.json":  # its hashes follow the files, compared themselves
        return json.dumps({**json.loads(shipped), "generated": None}).encode()
    if name != "definition.json":
        return shipped
    text = shipped.decode()
    installed = installed_versions()
    for library, version in recorded_versions(json.loads(text).get("tags", [])).items():
        now = installed.get(library, version)
        text = text.replace(f"{PROVENANCE_KEY}:{library}={version}", f"{PROVENANCE_KEY}:{library}={now}")
        text = text.replace(f"from {library} {version} ", f"from {library} {now} ")
    return text.encode()


def _differ_from_shipped(folders: list[Path], problems: Path) -> list[str]:
    """Files of `folders` (under `problems`) that differ from the shipped problems/; empty when all are identical."""
    files = sorted(p for folder in folders for p in folder.rglob("*") if p.is_file())
    assert files, f"nothing written in {folders}"
    shipped = ROOT / "problems"
    return [
        str(p.relative_to(problems))
        for p in files
        if not (shipped / p.relative_to(problems)).is_file()
        or _as_if_extracted_here((shipped / p.relative_to(problems)).read_bytes(), p.name)
        != _as_if_extracted_here(p.read_bytes(), p.name)
    ]


def _checkout(tmp_path: Path, script: str, recipes: bool = True) -> Path:
    """A scratch checkout: the script (it writes to the problems/ beside its own folder) and the recipes."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / script, tmp_path / "scripts" / script)
    if recipes:
        (tmp_path / "suite_recipes").symlink_to(ROOT / "suite_recipes")
    return tmp_path / "scripts" / script


def _generated(problems: Path, name: str, recipe: str, set_name: str = "FIB") -> Path:
    """A folder as recipe `recipe` would have written it (its provenance records what it wrote)."""
    draft = ProblemDraft(
        set=set_name,
        name=name,
        op_type="copy",
        description="copy",
        model=ModelRef("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "language", {}),
        axes={"n": {"type": "var"}},
        inputs={"x": {"shape": ["n"], "dtype": "float32"}},
        outputs={"y": {"shape": ["n"], "dtype": "float32"}},
        reference="def run(x):\n    return x\n",
        workloads=[{"n": n} for n in range(1, 9)],
    )
    return write_generated(draft, problems, recipe)


@pytest.mark.slow
def test_build_suite_regenerates_only_the_named_modules_into_the_problems_folder_beside_it(tmp_path):
    """A partial build writes its modules' folders and removes only their stale ones: several modules write
    into one set, and hand-written folders are the suite's own."""
    script, problems = _checkout(tmp_path, "build-suite"), tmp_path / "problems"
    stale = _generated(problems, "no_recipe_makes_this", "fib")
    extracted = _generated(problems, "made_by_extract", "extracted")
    other_module = _generated(problems, "not_rebuilt", "l2")
    by_hand = _folder(problems / "FIB", "written_by_hand", "recipe")
    (by_hand / "provenance.json").write_text(
        json.dumps({"model": {"name": "x", "hf_id": None, "domain": "language"}, "config": {}, "recipe": None})
    )

    result = subprocess.run(
        [sys.executable, str(script), "fib"], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    from suite_recipes import fib

    names = sorted(d.name for d in fib.drafts() if d.set == "FIB")  # fib.py also builds backward problems of L1
    assert result.stdout.strip() == f"wrote {len(fib.drafts())} problem folders under {problems}"
    assert sorted(p.name for p in (problems / "FIB").iterdir()) == sorted(
        names + [extracted.name, other_module.name, by_hand.name]
    )
    assert not stale.exists()
    assert _differ_from_shipped([problems / "FIB" / name for name in names], problems) == []


def test_build_suite_names_the_missing_recipes_folder(tmp_path):
    script = _checkout(tmp_path, "build-suite", recipes=False)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1 and not (tmp_path / "problems").exists()
    assert result.stderr.strip().startswith(f"build-suite: {tmp_path / 'suite_recipes'}: no recipes folder")


def test_build_suite_refuses_a_hand_edited_folder_and_writes_nothing(tmp_path):
    script, problems = _checkout(tmp_path, "build-suite"), tmp_path / "problems"
    from suite_recipes import drafts_by_recipe

    [draft, *_] = drafts_by_recipe(["fib"])["fib"]
    folder = problems / draft.set / draft.name
    folder.mkdir(parents=True)
    (folder / "reference.py").write_text("# mine\n")
    result = subprocess.run([sys.executable, str(script), "fib"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    assert f"{folder}: no provenance.json, so no recipe wrote it" in result.stderr
    assert sorted(p.name for p in problems.rglob("*")) == [draft.set, draft.name, "reference.py"]


@pytest.mark.slow
def test_extract_suite_writes_what_is_shipped_and_removes_stale_folders_only_on_a_full_run(
    tmp_path, monkeypatch, capsys
):
    import suite_recipes.extracted as catalog

    entry = next(e for e in catalog.EXTRACTIONS if (e.architecture, e.module, e.backward) == ("olmo2", "norm", False))
    monkeypatch.setattr(catalog, "EXTRACTIONS", [entry])  # a full run of a one-entry catalogue
    script, problems = _checkout(tmp_path, "extract-suite"), tmp_path / "problems"
    recipe = _generated(problems, "made_by_a_recipe", "l1", "L1")
    stale = _generated(problems, "no_entry_makes_this", "extracted", "L1")

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
    recorded = recorded_versions(json.loads((written / "definition.json").read_text())["tags"])
    assert recorded == installed_versions() and set(recorded) == {"transformers", "torch"}
    shipped = recorded_versions(
        json.loads((ROOT / "problems/L1" / written.name / "definition.json").read_text())["tags"]
    )
    assert _differ_from_shipped([written], problems) == [], (
        f"the extractor no longer reproduces the shipped problem: shipped with {shipped}, run with {recorded}"
    )


def _dependencies_script() -> dict:
    return runpy.run_path(str(ROOT / "scripts" / "dependencies"), run_name="not_main")


def test_the_lock_pins_every_dependency_of_the_dev_install_and_torch_at_the_cpu_build():
    """CI and the README install with -c requirements/lock.txt: a range left unpinned is a release away from red."""
    script = _dependencies_script()
    pins = script["parse_pins"]((ROOT / "requirements" / "lock.txt").read_text())
    assert pins["torch"] == "2.13.0" and pins["triton"] == "3.7.1", pins
    pyproject = (ROOT / "pyproject.toml").read_text()
    dev = re.search(r"^dev = \[(.*?)^\]", pyproject, re.MULTILINE | re.DOTALL).group(1)
    core = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.MULTILINE | re.DOTALL).group(1)
    names = {script["normalise"](m) for m in re.findall(r'^\s*"([A-Za-z0-9_.-]+)', core + dev, re.MULTILINE)}
    assert names - set(pins) == set(), "pyproject names packages the lock does not pin: run scripts/dependencies lock"


def test_dependency_drift_names_each_moved_package_once():
    script = _dependencies_script()
    locked = script["parse_pins"]("# header\ntorch==2.13.0\nTransformers==5.24.0\nold_pkg==1.0\n")
    newest = script["parse_pins"]("torch==2.13.0+cpu\ntransformers==5.25.0\nnew-pkg==2.0 ; python_version > '3'\n")
    assert newest == {"torch": "2.13.0", "transformers": "5.25.0", "new-pkg": "2.0"}
    assert script["drift"](locked, newest) == [
        "new-pkg: (not locked) -> 2.0",
        "old-pkg: 1.0 -> (no longer needed)",
        "transformers: 5.24.0 -> 5.25.0",
    ]
    assert script["parse_pins"](script["lock_text"](newest)) == newest
