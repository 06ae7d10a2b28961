"""Capacity booked ahead: the offerings seen (EC2 Capacity Block offerings, reservations
the account holds, with their age) and the bookings costsched made for jobs (a purchase
recorded before it is made, so that a crash never buys twice).

Adds two tables only.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def _offering() -> list[sa.Column]:
    return [sa.Column("cloud", sa.String(16), nullable=False),
            sa.Column("region", sa.String(64), nullable=False),
            sa.Column("zone", sa.String(64), nullable=False),
            sa.Column("instance_type", sa.String(128), nullable=False),
            sa.Column("market", sa.String(16), nullable=False),
            sa.Column("os", sa.String(16), nullable=False),
            sa.Column("gpu_model", sa.String(32), nullable=False),
            sa.Column("gpu_count", sa.Integer, nullable=False)]


def upgrade() -> None:
    op.create_table(
        "booked_offerings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        *_offering(),
        sa.Column("offering_id", sa.String(128), nullable=False),
        sa.Column("instance_count", sa.Integer, nullable=False),
        sa.Column("start_ts", sa.BigInteger, nullable=False),
        sa.Column("end_ts", sa.BigInteger, nullable=False),
        sa.Column("upfront_usd", sa.Float, nullable=False),
        sa.Column("usd_per_hour", sa.Float, nullable=False, server_default=sa.text("0")),
        sa.Column("currency", sa.String(8), nullable=False, server_default="USD"),
        sa.Column("tenancy", sa.String(16), nullable=False, server_default=""),
        sa.Column("wait_hours", sa.Float, nullable=False, server_default=sa.text("0")),
        sa.Column("observed_ts", sa.BigInteger, nullable=False),
        sa.Column("source", sa.String(256), nullable=False),
        sa.UniqueConstraint("cloud", "market", "offering_id", name="uq_booked_offerings_id"),
    )
    op.create_index("ix_booked_offerings_start", "booked_offerings", ["start_ts"])
    op.create_table(
        "bookings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("job_id", sa.Integer, nullable=True),
        *_offering(),
        sa.Column("offering_id", sa.String(128), nullable=False),
        sa.Column("instance_count", sa.Integer, nullable=False),
        sa.Column("start_ts", sa.BigInteger, nullable=False),
        sa.Column("end_ts", sa.BigInteger, nullable=False),
        sa.Column("upfront_usd", sa.Float, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reservation_id", sa.String(128), nullable=False, server_default=""),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
        sa.Column("created_ts", sa.BigInteger, nullable=False),
        sa.Column("updated_ts", sa.BigInteger, nullable=False),
        sa.UniqueConstraint("token", name="uq_bookings_token"),
    )
    op.create_index("ix_bookings_job", "bookings", ["job_id"])


def downgrade() -> None:
    op.drop_index("ix_bookings_job", table_name="bookings")
    op.drop_table("bookings")
    op.drop_index("ix_booked_offerings_start", table_name="booked_offerings")
    op.drop_table("booked_offerings")
