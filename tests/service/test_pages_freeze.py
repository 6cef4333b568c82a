"""Freezing a set (`solbench admin freeze SET`): its submissions' code becomes public; an unknown set is refused."""

from __future__ import annotations

import subprocess
import sys

import pytest

from solbench.service import queries
from solbench.service.errors import ServiceError
from solbench.service.web.freezing import freeze_problem_set


@pytest.fixture
def database(tmp_path):
    from solbench.service.catalog import import_suites
    from solbench.service.db import open_database
    from solbench.service.web.sample_data import write_suite

    engine, factory = open_database(f"sqlite:///{tmp_path / 'data' / 'solbench.db'}")
    import_suites(factory, (write_suite(tmp_path / "suite"),), "secret", 0)
    yield factory
    engine.dispose()


def test_freezing_a_set_leaves_the_others_open_and_sets_its_title(database):
    freeze_problem_set(database, "L2", title="Level 2")
    with database() as session:
        assert queries.set_frozen_at(session, "L2") is not None and queries.set_frozen_at(session, "L1") is None
        assert {s.name: s.title for s in queries.problem_sets(session)} == {"L1": "", "L2": "Level 2"}


def test_an_unknown_set_is_refused_with_the_known_ones(database):
    with pytest.raises(ServiceError, match=r"SET 'L7': no such problem set \(known: L1, L2\)"):
        freeze_problem_set(database, "L7")


@pytest.mark.slow
def test_admin_freeze_command(database, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "solbench", "admin", "freeze", "L1", "--data", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "set L1 frozen" in done.stdout, done.stderr
    with database() as session:
        assert queries.set_frozen_at(session, "L1") is not None
