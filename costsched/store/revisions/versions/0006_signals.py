"""Published spot risk signals (Spot Instance Advisor buckets, spot placement scores,
Azure eviction rates) and throughputs measured by costsched from its jobs' progress.

Adds tables only.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "risk_signals",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cloud", sa.String(16), nullable=False),
        sa.Column("region", sa.String(64), nullable=False),
        sa.Column("zone", sa.String(64), nullable=False),
        sa.Column("instance_type", sa.String(128), nullable=False),
        sa.Column("os", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("label", sa.String(32), nullable=False),
        sa.Column("observed_ts", sa.BigInteger, nullable=False),
        sa.Column("source", sa.String(256), nullable=False),
        sa.UniqueConstraint("cloud", "region", "zone", "instance_type", "os", "kind",
                            "observed_ts", "source", name="uq_risk_signals_key"),
    )
    op.create_index("ix_risk_signals_observed", "risk_signals", ["observed_ts"])
    op.create_table(
        "measured_throughputs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("gpu_model", sa.String(32), nullable=False),
        sa.Column("gpu_count", sa.Integer, nullable=False),
        sa.Column("precision", sa.String(8), nullable=False),
        sa.Column("steps_per_second", sa.Float, nullable=False),
        sa.Column("steps", sa.Float, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("measured_ts", sa.BigInteger, nullable=False),
        sa.Column("instance", sa.String(256), nullable=False, server_default=""),
        sa.Column("job_id", sa.Integer, nullable=False),
        sa.Column("placement_id", sa.Integer, nullable=False),
        sa.Column("forgotten", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.UniqueConstraint("placement_id", name="uq_measured_throughputs_placement"),
    )
    op.create_index("ix_measured_throughputs_model", "measured_throughputs",
                    ["model", "gpu_model", "gpu_count"])


def downgrade() -> None:
    op.drop_index("ix_measured_throughputs_model", table_name="measured_throughputs")
    op.drop_table("measured_throughputs")
    op.drop_index("ix_risk_signals_observed", table_name="risk_signals")
    op.drop_table("risk_signals")
