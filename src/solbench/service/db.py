"""The database: an SQLAlchemy 2 engine and session factory from a URL, and migrating it to the newest schema.

SQLite (the default, one file in the data folder) runs in WAL mode with a busy timeout, so the
server and the embedded workers (other processes) can all write: a writer waits for the lock
instead of failing. PostgreSQL is used by URL (``postgresql+psycopg://user:pw@host/db``).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from solbench.service.errors import ServiceError

SQLITE_BUSY_TIMEOUT_MS = 30_000
MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def make_engine(url: str) -> Engine:
    """An engine for `url`; a SQLite file's folder is created, and each connection set to WAL + busy timeout."""
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[1] if ":///" in url else ""
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if url.startswith("postgresql"):
        return create_engine(url, pool_pre_ping=True)
    raise ServiceError(f"--db {url}: unsupported database URL (use sqlite:///PATH or postgresql+psycopg://...)")


def _sqlite_pragmas(connection, _record) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded objects usable after commit (results are read after the transaction)."""
    return sessionmaker(bind=engine, expire_on_commit=False)


def alembic_config(engine: Engine):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return config


def upgrade(engine: Engine) -> None:
    """Migrate the database to the newest schema (Alembic `upgrade head`); a no-op when it is there already.

    Processes that start together (`solbench serve &` and `solbench admin add-user`) take turns: a file
    lock beside a SQLite file, an advisory lock on PostgreSQL; otherwise both could create the tables.
    """
    from alembic import command

    config = alembic_config(engine)
    with _migration_lock(engine), engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})")
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


MIGRATION_LOCK_KEY = 0x501BE7C4
"""Key of PostgreSQL's advisory lock taken while migrating."""


@contextmanager
def _migration_lock(engine: Engine):
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:":
        yield
        return
    import fcntl

    with open(f"{database}.migrate-lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def open_database(url: str, *, migrate: bool = True) -> tuple[Engine, sessionmaker[Session]]:
    """Engine and session factory for `url`, migrated to the newest schema first (unless `migrate` is False)."""
    engine = make_engine(url)
    if migrate:
        upgrade(engine)
    return engine, make_session_factory(engine)
