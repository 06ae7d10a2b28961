"""The job-move state machine's persisted state (one row per launch, migration or
recovery), and what launching taught about offerings' availability.

Adds tables only.

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
    op.create_table(
        "availability",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cloud", sa.String(16), nullable=False),
        sa.Column("region", sa.String(64), nullable=False),
        sa.Column("zone", sa.String(64), nullable=False),
        sa.Column("instance_type", sa.String(128), nullable=False),
        sa.Column("market", sa.String(16), nullable=False),
        sa.Column("gpu_model", sa.String(32), nullable=False),
        sa.Column("gpu_count", sa.Integer, nullable=False),
        sa.Column("ts", sa.BigInteger, nullable=False),
        sa.Column("event", sa.String(16), nullable=False),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
    )
    op.create_index("ix_availability_ts", "availability", ["ts"])


def downgrade() -> None:
    op.drop_index("ix_availability_ts", table_name="availability")
    op.drop_table("availability")
    op.drop_index("ix_moves_job", table_name="moves")
    op.drop_table("moves")
