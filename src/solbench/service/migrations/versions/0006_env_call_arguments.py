"""env call arguments: a test call's seed and workload, passed to the library's Env.test

Revision ID: 0006_env_call_arguments
Revises: 0005_agent_envs
Create Date: 2026-12-12 09:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_env_call_arguments"
down_revision = "0005_agent_envs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("env_calls", schema=None) as batch_op:
        batch_op.add_column(sa.Column("arguments", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("env_calls", schema=None) as batch_op:
        batch_op.drop_column("arguments")
