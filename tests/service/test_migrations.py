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
        assert MigrationContext.configure(connection).get_current_revision() == _head(engine)


def _head(engine) -> str:
    from alembic.script import ScriptDirectory

    from solbench.service.db import alembic_config

    return ScriptDirectory.from_config(alembic_config(engine)).get_current_head()


def test_0004_keeps_stored_ranked_scores_whose_held_out_run_passed(tmp_path):
    """Results stored before `held_out_passed` existed get it from their held-out traces: a passed run stays on the
    boards, a failed or missing one leaves them, and a version that holds nothing out passes."""
    import sqlalchemy as sa
    from alembic import command

    from solbench.service.db import alembic_config, make_engine

    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    config = alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0003_workers")
        connection.execute(
            sa.text("INSERT INTO users (id, name, is_admin, banned, created_at) VALUES (1, 'ann', 0, 0, '2026-01-01')")
        )
        connection.execute(
            sa.text("INSERT INTO problems (id, name, set_name, created_at) VALUES (1, 'add', 'L1', '2026-01-01')")
        )
        versions = {1: '[{"uuid": "h1"}]', 2: "[]"}
        for version, held_out in versions.items():
            connection.execute(
                sa.text(
                    "INSERT INTO problem_versions (id, problem_id, version_hash, definition, workloads, held_out,"
                    " source_dir, is_current, created_at) VALUES (:id, 1, :hash, '{}', '[]', :held_out, '/', 1,"
                    " '2026-01-01')"
                ),
                {"id": version, "hash": str(version) * 64, "held_out": held_out},
            )
        held_out_runs = {1: (1, "PASSED"), 2: (1, "TIMEOUT"), 3: (1, None), 4: (2, None)}  # result -> version, status
        for result, (version, status) in held_out_runs.items():
            traces = f'[{{"workload": {{"uuid": "h1"}}, "evaluation": {{"status": "{status}"}}}}]' if status else "[]"
            connection.execute(
                sa.text(
                    "INSERT INTO submissions (id, user_id, problem_version_id, mode, status, solution, code_hash,"
                    " created_at, attempts) VALUES (:id, 1, :version, 'ranked', 'done', '{}', '0', '2026-01-01', 1)"
                ),
                {"id": result, "version": version},
            )
            connection.execute(
                sa.text(
                    "INSERT INTO results (id, submission_id, problem_version_id, score, verdict, harness_version,"
                    " hardware, device, worker, environment, clock, traces, held_out_traces, t_sol_ms, t_b_ms,"
                    " cache_hit, created_at) VALUES (:id, :id, :version, 0.5, 'PASSED', '0', 'H100_SXM', 'cpu', 'w',"
                    " '{}', '{}', '[]', :traces, '{}', '{}', 0, '2026-01-01')"
                ),
                {"id": result, "version": version, "traces": traces},
            )
        command.upgrade(config, "head")
        passed = dict(connection.execute(sa.text("SELECT id, held_out_passed FROM results")).all())
    assert passed == {1: True, 2: False, 3: False, 4: True}
    engine.dispose()


def test_each_migrations_docstring_names_the_revision_it_follows():
    """`Revises:` in a migration's docstring is what a reader follows; it must agree with its down_revision."""
    from alembic.script import ScriptDirectory

    from solbench.service.db import alembic_config, make_engine

    scripts = ScriptDirectory.from_config(alembic_config(make_engine("sqlite://")))
    for script in scripts.walk_revisions():
        named = (script.module.__doc__ or "").split("Revises:", 1)[-1].splitlines()[0].strip()
        assert named == (script.down_revision or ""), f"{script.revision}: docstring says {named!r}"
