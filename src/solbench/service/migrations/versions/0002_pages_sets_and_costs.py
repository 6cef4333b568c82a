"""pages: problem_sets (title, description, frozen_at) and sol_analyses.costs (the roofline of a problem)

Revision ID: 0002_pages
Revises: 0001
Create Date: 2026-12-01 11:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_pages"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "problem_sets",
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("frozen_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("name"),
    )
    with op.batch_alter_table("sol_analyses", schema=None) as batch_op:
        batch_op.add_column(sa.Column("costs", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sol_analyses", schema=None) as batch_op:
        batch_op.drop_column("costs")
    op.drop_table("problem_sets")
