"""What a submission's broker message tells a worker (no broker needed)."""

import json

import pytest

from servers import redis_server  # noqa: F401  (fixture)
from service.conftest import HARDWARE, add_solution, fast_settings, settings_model
from solbench.service.settings import ServiceSettings


def test_workers_get_the_database_url_unless_it_holds_a_password(tmp_path):
    from solbench.service.celery_queue import settings_for_workers

    sqlite = json.loads(settings_for_workers(ServiceSettings(data_dir=tmp_path)))
    assert sqlite["db_url"] == f"sqlite:///{(tmp_path / 'solbench.db').resolve()}"  # absolute: same machine
    trusted = json.loads(settings_for_workers(ServiceSettings(db_url="postgresql+psycopg://svc@db:5432/lb")))
    assert trusted["db_url"] == "postgresql+psycopg://svc@db:5432/lb"
    secret = settings_for_workers(ServiceSettings(db_url="postgresql+psycopg://svc:hunter2@db:5432/lb"))
    assert "hunter2" not in secret and json.loads(secret)["db_url"] is None  # workers need --db then


def test_submissions_of_each_hardware_have_their_own_queue():
    from solbench.service.celery_queue import submission_queue

    assert submission_queue("B200") == "solbench.submissions.b200" != submission_queue("local")


@pytest.mark.slow
def test_the_task_retries_an_infrastructure_failure_until_the_database_marks_it_failed(tmp_path, redis_server):
    from sqlalchemy import func, select

    from solbench.runner.celery_app import BrokerSettings, make_celery_app
    from solbench.runner.celery_worker import WorkerOptions
    from solbench.service.catalog import current_version, import_suites
    from solbench.service.celery_queue import SUBMISSION_TASK, register_submission_task, settings_for_workers
    from solbench.service.db import open_database
    from solbench.service.models import Result, Submission, User

    url = f"sqlite:///{tmp_path / 'service.db'}"
    settings = settings_model(fast_settings(tmp_path, db_url=url, max_attempts=2))
    factory = open_database(url)[1]
    import_suites(factory, settings.suite_folders(), "secret", settings.held_out_per_problem)
    with factory.begin() as session:
        session.add(User(name="ann"))
        session.flush()
        submission = Submission(
            user_id=1,
            problem_version_id=current_version(session, "vector_add").id,
            mode="test",
            status="queued",
            solution=add_solution(),
            code_hash="0" * 64,
        )
        session.add(submission)
        session.flush()
        job = submission.id
    app = make_celery_app(BrokerSettings(redis_server.url))
    app.conf.update(task_always_eager=True)  # each retry runs at once, in this process, before apply returns
    broken = WorkerOptions(broker=BrokerSettings(redis_server.url), hardware=HARDWARE, device="cuda:7")  # none here
    register_submission_task(app, broken, database_url=None, data_dir=None)
    app.tasks[SUBMISSION_TASK].apply(args=[job, settings_for_workers(settings)])
    with factory() as session:
        submission = session.get(Submission, job)
        assert submission.status == "failed" and "cuda" in submission.error
        assert submission.attempts == 2  # max_attempts tries, then the next delivery found it failed and stopped
        assert session.scalar(select(func.count()).select_from(Result)) == 0
