"""The test servers themselves: a real Redis and a real PostgreSQL answer on 127.0.0.1, and stop afterwards."""

import pytest

from servers import postgres_server, postgres_url, redis_server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow


def test_redis_answers_on_loopback(redis_server):
    import redis

    client = redis.Redis.from_url(redis_server.url)
    assert client.ping()
    client.set("solbench-test", "1")
    assert client.get("solbench-test") == b"1"
    assert client.config_get("bind")["bind"] == "127.0.0.1"


def test_each_postgres_database_is_fresh_and_enforces_constraints(postgres_server):
    import sqlalchemy

    first, second = postgres_server.create_database(), postgres_server.create_database()
    assert first != second
    engine = sqlalchemy.create_engine(first)
    with engine.begin() as connection:
        connection.execute(sqlalchemy.text("CREATE TABLE result (submission INTEGER UNIQUE)"))
        connection.execute(sqlalchemy.text("INSERT INTO result VALUES (1)"))
    with pytest.raises(sqlalchemy.exc.IntegrityError), engine.begin() as connection:
        connection.execute(sqlalchemy.text("INSERT INTO result VALUES (1)"))
    engine.dispose()
    with sqlalchemy.create_engine(second).connect() as connection:
        assert (
            connection.execute(sqlalchemy.text("SELECT count(*) FROM pg_tables WHERE tablename = 'result'")).scalar()
            == 0
        )
