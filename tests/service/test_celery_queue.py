"""What a submission's broker message tells a worker (no broker needed)."""

import json

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
