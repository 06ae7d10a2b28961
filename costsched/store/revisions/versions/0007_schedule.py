"""The daemon's schedule table (apscheduler_jobs), made with the schema.

APScheduler creates it on its first start when it is missing; two daemons starting at once
on a new store raced to do so. A store where a daemon made it already keeps it as it is.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TABLE = "apscheduler_jobs"


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table(TABLE):
        return
    op.create_table(
        TABLE,
        sa.Column("id", sa.Unicode(191), primary_key=True),
        sa.Column("next_run_time", sa.Float(25)),
        sa.Column("job_state", sa.LargeBinary, nullable=False),
    )
    op.create_index(f"ix_{TABLE}_next_run_time", TABLE, ["next_run_time"])


def downgrade() -> None:
    op.drop_index(f"ix_{TABLE}_next_run_time", table_name=TABLE)
    op.drop_table(TABLE)
