"""What each job's plan predicted at launch (hours, cost, preemptions, the throughput it
used), kept beside what the job then did.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TABLE = "job_predictions"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), primary_key=True),
        sa.Column("predicted_ts", sa.BigInteger, nullable=False),
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("cloud", sa.String(16), nullable=False),
        sa.Column("region", sa.String(64), nullable=False),
        sa.Column("zone", sa.String(64), nullable=False),
        sa.Column("instance_type", sa.String(128), nullable=False),
        sa.Column("market", sa.String(16), nullable=False),
        sa.Column("gpu_model", sa.String(32), nullable=False),
        sa.Column("gpu_count", sa.Integer, nullable=False),
        sa.Column("usd_per_hour", sa.Float, nullable=False),
        sa.Column("steps", sa.Float, nullable=False),
        sa.Column("steps_per_second", sa.Float, nullable=False),
        sa.Column("throughput_source", sa.Text, nullable=False, server_default=""),
        sa.Column("expected_hours", sa.Float, nullable=False),
        sa.Column("expected_usd", sa.Float, nullable=False),
        sa.Column("expected_preemptions", sa.Float, nullable=False),
        sa.Column("flagged_ts", sa.BigInteger, nullable=True),
    )


def downgrade() -> None:
    op.drop_table(TABLE)
