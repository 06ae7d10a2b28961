"""What launching taught about an offering says who saw it: `source` is '' for a cloud's own
instances and 'local' for those the local launcher ran on this machine standing in for a
cloud's offering (a simulated preemption or capacity error), which the risk model and the
cloud launches' rankings never count as the cloud's.

Adds one column to `availability`, '' for every observation stored before (each counted as
the cloud's, as before).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("availability") as table:
        table.add_column(sa.Column("source", sa.String(16), nullable=False,
                                   server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("availability") as table:
        table.drop_column("source")
