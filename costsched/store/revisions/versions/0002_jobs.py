"""Job state (jobs, placements, an append-only event log) and the zones of regional prices.

Adds tables only: offerings and prices are left as they are.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "zone_coverage",
        sa.Column("cloud", sa.String(16), nullable=False),
        sa.Column("region", sa.String(64), nullable=False),
        sa.Column("zone", sa.String(64), nullable=False),
        sa.Column("instance_type", sa.String(128), nullable=False),
        sa.Column("market", sa.String(16), nullable=False),
        sa.Column("first_seen_ts", sa.BigInteger, nullable=False),
        sa.Column("last_seen_ts", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint(
            "cloud", "region", "zone", "instance_type", "market", name="pk_zone_coverage"
        ),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("policy", sa.String(32), nullable=False, server_default=""),
        sa.Column("steps_total", sa.Float, nullable=False),
        sa.Column("steps_done", sa.Float, nullable=False, server_default=sa.text("0")),
        sa.Column("checkpoint_location", sa.String(1024), nullable=False, server_default=""),
        sa.Column("checkpoint_step", sa.Float, nullable=True),
        sa.Column("created_ts", sa.BigInteger, nullable=False),
        sa.Column("updated_ts", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_jobs_name", "jobs", ["name"])
    op.create_table(
        "placements",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), nullable=False),
        sa.Column("cloud", sa.String(16), nullable=False),
        sa.Column("region", sa.String(64), nullable=False),
        sa.Column("zone", sa.String(64), nullable=False),
        sa.Column("instance_type", sa.String(128), nullable=False),
        sa.Column("market", sa.String(16), nullable=False),
        sa.Column("os", sa.String(16), nullable=False),
        sa.Column("gpu_model", sa.String(32), nullable=False),
        sa.Column("gpu_count", sa.Integer, nullable=False),
        sa.Column("start_ts", sa.BigInteger, nullable=False),
        sa.Column("end_ts", sa.BigInteger, nullable=True),
        sa.Column("usd_per_hour", sa.Float, nullable=False),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("instance", sa.String(256), nullable=False, server_default=""),
    )
    op.create_index("ix_placements_job_start", "placements", ["job_id", "start_ts"])
    op.create_table(
        "job_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), nullable=False),
        sa.Column("ts", sa.BigInteger, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("from_state", sa.String(16), nullable=True),
        sa.Column("to_state", sa.String(16), nullable=True),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
    )
    op.create_index("ix_job_events_job", "job_events", ["job_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_job_events_job", table_name="job_events")
    op.drop_table("job_events")
    op.drop_index("ix_placements_job_start", table_name="placements")
    op.drop_table("placements")
    op.drop_index("ix_jobs_name", table_name="jobs")
    op.drop_table("jobs")
    op.drop_table("zone_coverage")
