"""How long each placement's setup took, as its instance reported it (its agent measures
it): the report says what of a job's billed hours beyond its training was its setup, never
a setup it did not measure.

Adds one nullable column to `placements`; placements stored before, and those whose
instance did not say, have none.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("placements") as table:
        table.add_column(sa.Column("setup_seconds", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("placements") as table:
        table.drop_column("setup_seconds")
