"""The job-move state machine's persisted state: one row per launch, migration or recovery.

Adds a table only.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "moves",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("state", sa.String(24), nullable=False),
        sa.Column("source_instance", sa.String(256), nullable=False, server_default=""),
        sa.Column("candidates", sa.Text, nullable=False),
        sa.Column("tried", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("target_instance", sa.String(256), nullable=False, server_default=""),
        sa.Column("checkpoint_version", sa.Integer, nullable=True),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
        sa.Column("created_ts", sa.BigInteger, nullable=False),
        sa.Column("updated_ts", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_moves_job", "moves", ["job_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_moves_job", table_name="moves")
    op.drop_table("moves")
