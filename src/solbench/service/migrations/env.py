"""Alembic environment: migrates the connection the caller hands over (db.upgrade), else the configured URL."""

from alembic import context
from sqlalchemy import create_engine

from solbench.service.errors import ServiceError
from solbench.service.models import Base

target_metadata = Base.metadata


def run_migrations() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = context.config.get_main_option("sqlalchemy.url")
    if url is None:
        raise ServiceError("alembic: no connection was handed over and no sqlalchemy.url is configured")
    engine = create_engine(url)
    with engine.begin() as connection:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    context.configure(
        url=context.config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata, literal_binds=True
    )
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations()
