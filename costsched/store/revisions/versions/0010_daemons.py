"""The daemons running now: each daemon's process, how it was started, its log, its
heartbeat and its last look at the running jobs (`costsched daemon status`, `status`).

Adds a table only.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

TABLE = "daemons"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("holder", sa.String(128), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("tasks", sa.String(64), nullable=False),
        sa.Column("watch_seconds", sa.Float, nullable=False),
        sa.Column("log", sa.String(1024), nullable=False, server_default=""),
        sa.Column("started_ts", sa.BigInteger, nullable=False),
        sa.Column("seen_ts", sa.BigInteger, nullable=False),
        sa.Column("pass_ts", sa.BigInteger, nullable=True),
        sa.Column("pass_status", sa.String(16), nullable=False, server_default=""),
        sa.Column("pass_detail", sa.Text, nullable=False, server_default=""),
    )


def downgrade() -> None:
    op.drop_table(TABLE)
