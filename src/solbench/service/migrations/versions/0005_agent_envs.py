"""agent environments served over HTTP: agent_envs (settings and library state) and env_calls (their jobs)

Revision ID: 0005_agent_envs
Revises: 0004_submission_flags
Create Date: 2026-12-10 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_agent_envs"
down_revision = "0004_submission_flags"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_envs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("problem_version_id", sa.Integer(), nullable=False),
        sa.Column("hardware", sa.String(length=100), nullable=False),
        sa.Column("reward", sa.String(length=32), nullable=False),
        sa.Column("budget", sa.JSON(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=True),
        sa.Column("card", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["problem_version_id"], ["problem_versions.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_agent_envs_user_id"), "agent_envs", ["user_id"], unique=False)
    op.create_table(
        "env_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("env_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("solution", sa.JSON(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("refusal", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("claim_token", sa.String(length=64), nullable=True),
        sa.Column("worker", sa.String(length=200), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["env_id"], ["agent_envs.id"]),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_env_calls_env_id"), "env_calls", ["env_id"], unique=False)
    op.create_index("ix_env_calls_status_id", "env_calls", ["status", "id"], unique=False)
    op.create_index("ix_env_calls_user_created", "env_calls", ["user_id", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_env_calls_user_created", table_name="env_calls")
    op.drop_index("ix_env_calls_status_id", table_name="env_calls")
    op.drop_index(op.f("ix_env_calls_env_id"), table_name="env_calls")
    op.drop_table("env_calls")
    op.drop_index(op.f("ix_agent_envs_user_id"), table_name="agent_envs")
    op.drop_table("agent_envs")
