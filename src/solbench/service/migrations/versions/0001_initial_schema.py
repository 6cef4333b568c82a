"""initial schema: users and tokens, problems and versions, submissions, results, workers

Revision ID: 0001
Revises:
Create Date: 2026-12-01 10:52:12.415577
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "baselines",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("definition", sa.String(length=200), nullable=False),
        sa.Column("workload", sa.String(length=200), nullable=False),
        sa.Column("hardware", sa.String(length=100), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("imported_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("definition", "workload", "hardware"),
    )
    op.create_table(
        "problems",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("set_name", sa.String(length=100), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    with op.batch_alter_table("problems", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_problems_set_name"), ["set_name"], unique=False)

    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("banned", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "workers",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("hardware", sa.String(length=100), nullable=False),
        sa.Column("device", sa.String(length=100), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("last_seen", sa.DateTime(), nullable=False),
        sa.Column("current_submission_id", sa.Integer(), nullable=True),
        sa.Column("evaluations", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_api_tokens_user_id"), ["user_id"], unique=False)

    op.create_table(
        "problem_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("problem_id", sa.Integer(), nullable=False),
        sa.Column("version_hash", sa.String(length=64), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.Column("workloads", sa.JSON(), nullable=False),
        sa.Column("held_out", sa.JSON(), nullable=False),
        sa.Column("source_dir", sa.Text(), nullable=False),
        sa.Column("is_current", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["problem_id"], ["problems.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("problem_id", "version_hash"),
    )
    with op.batch_alter_table("problem_versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_problem_versions_problem_id"), ["problem_id"], unique=False)

    op.create_table(
        "sol_analyses",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("problem_version_id", sa.Integer(), nullable=False),
        sa.Column("hardware", sa.String(length=100), nullable=False),
        sa.Column("analyzer_version", sa.String(length=64), nullable=False),
        sa.Column("t_sol_ms", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["problem_version_id"], ["problem_versions.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("problem_version_id", "hardware", "analyzer_version"),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("problem_version_id", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("solution", sa.JSON(), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("deleted_at", sa.DateTime(), nullable=True),
        sa.Column("claim_token", sa.String(length=64), nullable=True),
        sa.Column("worker", sa.String(length=200), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("rescore_reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["problem_version_id"], ["problem_versions.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("user_id", "idempotency_key"),
    )
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_submissions_code_hash"), ["code_hash"], unique=False)
        batch_op.create_index(batch_op.f("ix_submissions_problem_version_id"), ["problem_version_id"], unique=False)
        batch_op.create_index("ix_submissions_status_id", ["status", "id"], unique=False)
        batch_op.create_index("ix_submissions_user_created", ["user_id", "created_at"], unique=False)

    op.create_table(
        "results",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("problem_version_id", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("public_score", sa.Float(), nullable=True),
        sa.Column("held_out_score", sa.Float(), nullable=True),
        sa.Column("verdict", sa.String(length=32), nullable=False),
        sa.Column("harness_version", sa.String(length=64), nullable=False),
        sa.Column("hardware", sa.String(length=100), nullable=False),
        sa.Column("device", sa.String(length=200), nullable=False),
        sa.Column("worker", sa.String(length=200), nullable=False),
        sa.Column("environment", sa.JSON(), nullable=False),
        sa.Column("clock", sa.JSON(), nullable=False),
        sa.Column("traces", sa.JSON(), nullable=False),
        sa.Column("held_out_traces", sa.JSON(), nullable=False),
        sa.Column("t_sol_ms", sa.JSON(), nullable=False),
        sa.Column("t_b_ms", sa.JSON(), nullable=False),
        sa.Column("cache_hit", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("rescored_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["problem_version_id"], ["problem_versions.id"]),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("submission_id"),
    )
    op.create_table(
        "score_changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("old_score", sa.Float(), nullable=True),
        sa.Column("new_score", sa.Float(), nullable=True),
        sa.Column("old_harness", sa.String(length=64), nullable=False),
        sa.Column("new_harness", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("score_changes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_score_changes_submission_id"), ["submission_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("score_changes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_score_changes_submission_id"))

    op.drop_table("score_changes")
    op.drop_table("results")
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.drop_index("ix_submissions_user_created")
        batch_op.drop_index("ix_submissions_status_id")
        batch_op.drop_index(batch_op.f("ix_submissions_problem_version_id"))
        batch_op.drop_index(batch_op.f("ix_submissions_code_hash"))

    op.drop_table("submissions")
    op.drop_table("sol_analyses")
    with op.batch_alter_table("problem_versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_problem_versions_problem_id"))

    op.drop_table("problem_versions")
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_tokens_user_id"))

    op.drop_table("api_tokens")
    op.drop_table("workers")
    op.drop_table("users")
    with op.batch_alter_table("problems", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_problems_set_name"))

    op.drop_table("problems")
    op.drop_table("baselines")
