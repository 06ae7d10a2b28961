"""The first and the last step a job reported on each placement, with when: a placement's
training time is the time between them, its setup (boot, install, data loading) left out,
so that a measured speed is never a slow start read as slow training.

Adds four nullable columns to `placements`; placements stored before have none (their
jobs are measured over their placements' hours, as before).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

COLUMNS = (("first_step", sa.Float), ("first_step_ts", sa.BigInteger),
           ("last_step", sa.Float), ("last_step_ts", sa.BigInteger))


def upgrade() -> None:
    with op.batch_alter_table("placements") as table:
        for name, kind in COLUMNS:
            table.add_column(sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("placements") as table:
        for name, _ in reversed(COLUMNS):
            table.drop_column(name)
