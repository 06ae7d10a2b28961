"""The decider's latest word on each running job: `job_decisions` keeps, per job, what the
pass that decides (the daemon's re-plan, `costsched migrate`) decided last, on which
placement, when, by whom, the dollars of staying and of moving, and why, so that `status`
shows that decision rather than deciding again.

Adds one table, empty: a job decided before it has no stored decision until its next pass.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "job_decisions",
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), primary_key=True),
        sa.Column("placement_id", sa.Integer, nullable=False),
        sa.Column("decided_ts", sa.BigInteger, nullable=False),
        sa.Column("decided_by", sa.String(64), nullable=False),
        sa.Column("moves", sa.Boolean, nullable=False),
        sa.Column("choice", sa.String(512), nullable=False, server_default=""),
        sa.Column("stay_usd", sa.Float, nullable=True),
        sa.Column("move_usd", sa.Float, nullable=True),
        sa.Column("move_id", sa.Integer, nullable=True),
        sa.Column("reason", sa.Text, nullable=False, server_default=""),
    )


def downgrade() -> None:
    op.drop_table("job_decisions")
