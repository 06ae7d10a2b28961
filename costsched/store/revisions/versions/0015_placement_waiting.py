"""A placement whose instance waits for capacity (a flex-start VM) is billed only from when
it runs: `waiting` marks it, charged nothing until its instance is seen running, when its
start is set to that time.

Adds one column to `placements`, false for every placement stored before (each was charged
from its start, as before).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("placements") as table:
        table.add_column(sa.Column("waiting", sa.Boolean, nullable=False,
                                   server_default=sa.text("false")))


def downgrade() -> None:
    with op.batch_alter_table("placements") as table:
        table.drop_column("waiting")
