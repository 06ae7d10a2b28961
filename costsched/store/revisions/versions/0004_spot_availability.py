"""Spot availability over time, run-length encoded: intervals of one state per offering,
imported from availability and preemption traces and probe logs.

Adds a table only.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "spot_availability",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cloud", sa.String(16), nullable=False),
        sa.Column("region", sa.String(64), nullable=False),
        sa.Column("zone", sa.String(64), nullable=False),
        sa.Column("instance_type", sa.String(128), nullable=False),
        sa.Column("market", sa.String(16), nullable=False),
        sa.Column("gpu_model", sa.String(32), nullable=False),
        sa.Column("gpu_count", sa.Integer, nullable=False),
        sa.Column("start_ts", sa.BigInteger, nullable=False),
        sa.Column("end_ts", sa.BigInteger, nullable=False),
        sa.Column("available", sa.Boolean, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("source", sa.String(256), nullable=False),
        sa.UniqueConstraint("cloud", "region", "zone", "instance_type", "market", "kind",
                            "source", "start_ts", "available",
                            name="uq_spot_availability_key"),
    )
    op.create_index("ix_spot_availability_zone_start", "spot_availability",
                    ["zone", "start_ts"])


def downgrade() -> None:
    op.drop_index("ix_spot_availability_zone_start", table_name="spot_availability")
    op.drop_table("spot_availability")
