"""The Alembic migrations build exactly the schema of models.py (autogenerate finds nothing to add)."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from solbench.service.db import open_database
from solbench.service.models import Base


def test_models_match_the_migrations(tmp_path):
    engine, _ = open_database(f"sqlite:///{tmp_path / 'fresh.db'}")
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert differences == []
    assert set(Base.metadata.tables) <= set(engine.dialect.get_table_names(engine.connect()))


def test_upgrading_twice_is_harmless(tmp_path):
    url = f"sqlite:///{tmp_path / 'again.db'}"
    open_database(url)
    engine, factory = open_database(url)
    with engine.connect() as connection:
        assert MigrationContext.configure(connection).get_current_revision() == "0001"
