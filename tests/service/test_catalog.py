"""Problems in the database: held-out workloads derived from the server's secret (fast: SQLite in tmp_path)."""

from __future__ import annotations

import shutil
from pathlib import Path

from service.conftest import fast_settings, settings_model
from solbench.service.app import prepare
from solbench.service.catalog import current_version


def _held_out_axes(root: Path) -> list[dict]:
    """The axes of the held-out workloads that a server in `root` (its own copy of the suite, its own data folder
    and so its own secret) stores for vector_add."""
    service = prepare(settings_model(fast_settings(root, workers=0, held_out_per_problem=4)))
    try:
        with service.session_factory() as session:
            return [w["axes"] for w in current_version(session, "vector_add").held_out]
    finally:
        service.engine.dispose()


def test_held_out_workloads_follow_the_servers_secret(tmp_path):
    """Only the server knows its held-out shapes: two servers with their own secrets derive different ones from
    the same problem, and a server given the first one's secret derives the same ones (a rebuilt database)."""
    first = _held_out_axes(tmp_path / "first")
    assert len(first) == 4
    assert _held_out_axes(tmp_path / "second") != first
    (tmp_path / "copy" / "data").mkdir(parents=True)
    shutil.copy(tmp_path / "first" / "data" / "secret", tmp_path / "copy" / "data" / "secret")
    assert _held_out_axes(tmp_path / "copy") == first
