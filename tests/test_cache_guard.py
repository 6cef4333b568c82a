"""The cache guard (tests/cache_guard.py) really fails a test that writes to the user's cache folder."""

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

INNER_TESTS = """
import os
from pathlib import Path

from solbench.cache_dir import cache_dir
from solbench.hardware.local import local_probe_path


def test_writes_to_the_users_cache():
    folder = Path(os.environ["HOME"]) / ".cache" / "solbench"
    folder.mkdir(parents=True)
    (folder / "leaked").write_text("x")


def test_uses_its_own_cache_folder():
    assert cache_dir() != Path(os.environ["HOME"]) / ".cache" / "solbench"
    local_probe_path().parent.mkdir(parents=True)
    local_probe_path().write_text("{}")
"""


def test_a_test_writing_to_the_users_cache_fails_and_one_using_its_own_passes(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    environment = {k: v for k, v in os.environ.items() if k not in ("SOLBENCH_CACHE_DIR", "XDG_CACHE_HOME")}
    environment.update(HOME=str(home), PYTHONPATH=str(TESTS))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "cache_guard",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
            "--rootdir",
            str(tmp_path),
            "-c",
            os.devnull,
            str(tmp_path / "test_inner.py"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=environment,
    )
    assert "2 passed, 1 error" in result.stdout, result.stdout + result.stderr
    assert "ERROR at teardown of test_writes_to_the_users_cache" in result.stdout
    assert f"the test changed the user's solbench cache folder {home / '.cache' / 'solbench'}" in result.stdout


def test_the_cache_folder_rule():
    from solbench.cache_dir import cache_dir

    assert cache_dir({"SOLBENCH_CACHE_DIR": "/x/y", "XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path("/x/y")
    assert cache_dir({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path("/c/solbench")
    assert cache_dir({"XDG_CACHE_HOME": "relative", "HOME": "/h"}) == Path("/h/.cache/solbench")
    assert cache_dir({"SOLBENCH_CACHE_DIR": "", "HOME": "/h"}) == Path("/h/.cache/solbench")


def test_every_test_runs_with_its_own_empty_cache_folder(isolated_cache):
    assert os.environ["SOLBENCH_CACHE_DIR"] == str(isolated_cache) and not any(isolated_cache.iterdir())
