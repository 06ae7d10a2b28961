"""A daemon's row keeps the seconds between its last two passes (`pass_every`), so that a
start's or a launch's budget check charges the next watch interval as the watch will: for
as long as its passes are apart when they come later than its configured interval.

Adds one nullable column to `daemons` (unknown until a daemon's second pass).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("daemons") as table:
        table.add_column(sa.Column("pass_every", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("daemons") as table:
        table.drop_column("pass_every")
