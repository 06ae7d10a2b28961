"""Initial schema: offerings and their price history.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "offerings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cloud", sa.String(16), nullable=False),
        sa.Column("region", sa.String(64), nullable=False),
        sa.Column("zone", sa.String(64), nullable=False),
        sa.Column("instance_type", sa.String(128), nullable=False),
        sa.Column("market", sa.String(16), nullable=False),
        sa.Column("os", sa.String(16), nullable=False),
        sa.Column("gpu_model", sa.String(32), nullable=False),
        sa.Column("gpu_count", sa.Integer, nullable=False),
        sa.Column("vcpus", sa.Integer, nullable=False),
        sa.Column("memory_gb", sa.Float, nullable=False),
        sa.UniqueConstraint(
            "cloud", "region", "zone", "instance_type", "market", "os", name="uq_offering_key"
        ),
    )
    op.create_table(
        "prices",
        sa.Column(
            "offering_id", sa.Integer, sa.ForeignKey("offerings.id"), primary_key=True
        ),
        sa.Column("effective_ts", sa.BigInteger, primary_key=True),
        sa.Column("usd_per_hour", sa.Float, nullable=False),
        sa.Column("source", sa.String(128), nullable=False),
        sqlite_with_rowid=False,
    )


def downgrade() -> None:
    op.drop_table("prices")
    op.drop_table("offerings")
