"""A pytest plugin: every test gets an empty solbench cache folder, and fails if it touches the user's.

Without it a test can pass only on machines where, say, `solbench hw probe` once ran (the probe is
read from the cache folder), and a test can leave files behind that change later runs. The user's
folders are those the environment pointed at when pytest started: `$SOLBENCH_CACHE_DIR` if set, and
the default without it (`$XDG_CACHE_HOME/solbench` or `~/.cache/solbench`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from solbench.cache_dir import CACHE_DIR_VARIABLE, cache_dir

USER_CACHE_FOLDERS = sorted(
    {cache_dir(os.environ), cache_dir({k: v for k, v in os.environ.items() if k != CACHE_DIR_VARIABLE})}
)


def folder_state(folder: Path) -> tuple | None:
    """Every entry under `folder` with its size and modification time; None when the folder is absent."""
    if not folder.exists():
        return None
    entries = [folder, *sorted(folder.rglob("*"))]
    return tuple((str(entry), entry.lstat().st_mtime_ns, entry.lstat().st_size) for entry in entries)


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch) -> Path:
    """This test's own, empty solbench cache folder (also in the environment its subprocesses inherit)."""
    folder = tmp_path_factory.mktemp("solbench-cache")
    before = {user: folder_state(user) for user in USER_CACHE_FOLDERS}
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(folder))
    yield folder
    touched = [str(user) for user in USER_CACHE_FOLDERS if folder_state(user) != before[user]]
    if touched:
        pytest.fail(
            f"the test changed the user's solbench cache folder {', '.join(touched)}: tests must use the "
            f"`isolated_cache` fixture's folder (${CACHE_DIR_VARIABLE} points there)",
            pytrace=False,
        )
