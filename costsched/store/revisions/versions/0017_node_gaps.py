"""A gang's nodes are billed each for the time it ran: `node_gaps` keeps when a node of a
gang placement was not running (a flex-start node waiting for capacity while a peer runs,
or a node's replacement waiting for it), charged nothing over that span.

Adds one table, empty: every placement stored before is charged as before (each of its
nodes over the placement's own span).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "node_gaps",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("placement_id", sa.Integer, sa.ForeignKey("placements.id"),
                  nullable=False),
        sa.Column("rank", sa.Integer, nullable=False),
        sa.Column("start_ts", sa.BigInteger, nullable=False),
        sa.Column("end_ts", sa.BigInteger, nullable=True),
    )
    op.create_index("ix_node_gaps_placement", "node_gaps", ["placement_id"])


def downgrade() -> None:
    op.drop_index("ix_node_gaps_placement", table_name="node_gaps")
    op.drop_table("node_gaps")
