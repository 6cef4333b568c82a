"""workers: heartbeat interval, whether idle workers beat, when a worker stopped, its hardware's figures

Revision ID: 0003_workers
Revises: 0002_pages
Create Date: 2026-12-06 06:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_workers"
down_revision = "0002_pages"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("heartbeat_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("beats_when_idle", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("stopped_at", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("hardware_figures", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("workers", schema=None) as batch_op:
        batch_op.drop_column("hardware_figures")
        batch_op.drop_column("stopped_at")
        batch_op.drop_column("beats_when_idle")
        batch_op.drop_column("heartbeat_s")
