"""The embedded queue of `solbench serve`: real worker processes, one killed mid-job."""

from __future__ import annotations

import os
import signal
import time

import pytest

from service.conftest import fast_settings, settings_model

SLOW = "import time\nimport torch\n\ndef run(x, y):\n    time.sleep(20)\n    return x + y\n"


def _wait_for(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"no {what} within {timeout_s} s")


@pytest.mark.slow
def test_a_killed_worker_is_shown_gone_and_its_job_requeued_at_once(tmp_path):
    from service.conftest import add_solution
    from solbench.service import queries
    from solbench.service.catalog import current_version, import_suites
    from solbench.service.db import open_database
    from solbench.service.embedded import EmbeddedQueue
    from solbench.service.models import Submission, User

    settings = settings_model(fast_settings(tmp_path, workers=1, stale_after_s=600.0, heartbeat_s=30.0))
    settings.data_dir.mkdir(parents=True)
    _, database = open_database(settings.database_url)  # the one the worker processes open
    import_suites(database, settings.suite_folders(), "secret", settings.held_out_per_problem)
    with database.begin() as session:
        session.add(User(name="ann"))
        session.flush()
        job = Submission(
            user_id=1,
            problem_version_id=current_version(session, "vector_add").id,
            mode="private",
            status="queued",
            solution=add_solution(SLOW),
            code_hash="0" * 64,
        )
        session.add(job)
        session.flush()
        job_id = job.id
    queue = EmbeddedQueue(settings, database)
    try:

        def running_on():
            with database() as session:
                row = session.get(Submission, job_id)
                return row.worker if row.status == "running" else None

        worker = _wait_for(running_on, 60, "worker running the job")
        (pid,) = queue.pids
        os.kill(pid, signal.SIGKILL)  # a process this test started: the queue's own worker
        killed_at = time.monotonic()

        def seen_dead():
            with database() as session:
                gone = {w.name for w in queries.status(session).workers if not w.alive}
                row = session.get(Submission, job_id)
                return worker in gone and row.attempts == 2 and row.worker != worker

        _wait_for(seen_dead, 10, "dead worker shown gone with its job back in the queue")
        # Neither stale_after_s (600 s) nor the 30 s heartbeat had to pass: the parent saw the child die.
        assert time.monotonic() - killed_at < 10
    finally:
        queue.close()
