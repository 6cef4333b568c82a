"""submission flags: an admin's hacked flag per submission, and whether a result's secret held-out run passed

Revision ID: 0004_submission_flags
Revises: 0003_workers
Create Date: 2026-12-10 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_submission_flags"
down_revision = "0003_workers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "submission_flags",
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("flagged_by", sa.String(length=200), nullable=False),
        sa.Column("flagged_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"]),
        sa.PrimaryKeyConstraint("submission_id"),
    )
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("held_out_passed", sa.Boolean(), nullable=False, server_default=sa.false()))
    _backfill_held_out_passed()


def _backfill_held_out_passed() -> None:
    """Stored results keep their place on the boards where their held-out run passed: the same rule as
    solbench.service.scoring.held_out_run_passed, on the stored JSON (a migration does not import the app)."""
    results = sa.table(
        "results",
        sa.column("id", sa.Integer),
        sa.column("problem_version_id", sa.Integer),
        sa.column("held_out_traces", sa.JSON),
        sa.column("held_out_passed", sa.Boolean),
    )
    versions = sa.table("problem_versions", sa.column("id", sa.Integer), sa.column("held_out", sa.JSON))
    connection = op.get_bind()
    held_out = {row.id: {w["uuid"] for w in row.held_out or []} for row in connection.execute(sa.select(versions))}
    passed = []
    for row in connection.execute(sa.select(results.c.id, results.c.problem_version_id, results.c.held_out_traces)):
        statuses = {t["workload"]["uuid"]: (t.get("evaluation") or {}).get("status") for t in row.held_out_traces or []}
        expected = held_out.get(row.problem_version_id, set())
        if all(statuses.get(uuid) == "PASSED" for uuid in expected):
            passed.append(row.id)
    for start in range(0, len(passed), 500):  # SQLite bounds the parameters of one statement
        chunk = passed[start : start + 500]
        connection.execute(sa.update(results).where(results.c.id.in_(chunk)).values(held_out_passed=True))


def downgrade() -> None:
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_column("held_out_passed")
    op.drop_table("submission_flags")
