"""The accounts' quotas that GPU instances draw on, as last read, and how each cloud's were
last read.

Adds tables only.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "quotas",
        sa.Column("cloud", sa.String(16), nullable=False),
        sa.Column("scope", sa.String(64), nullable=False),
        sa.Column("code", sa.String(128), nullable=False),
        sa.Column("name", sa.String(256), nullable=False, server_default=""),
        sa.Column("unit", sa.String(16), nullable=False),
        sa.Column("account", sa.String(128), nullable=False, server_default=""),
        sa.Column("limit_value", sa.Float, nullable=True),
        sa.Column("used_value", sa.Float, nullable=True),
        sa.Column("observed_ts", sa.BigInteger, nullable=True),
        sa.Column("source", sa.String(256), nullable=False, server_default=""),
        sa.Column("refused_value", sa.Float, nullable=True),
        sa.Column("refused_ts", sa.BigInteger, nullable=True),
        sa.Column("refused_detail", sa.Text, nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("cloud", "scope", "code", name="pk_quotas"),
    )
    op.create_table(
        "quota_reads",
        sa.Column("cloud", sa.String(16), primary_key=True),
        sa.Column("read_ts", sa.BigInteger, nullable=False),
        sa.Column("quotas", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("error", sa.Text, nullable=False, server_default=""),
        sa.Column("fix", sa.Text, nullable=False, server_default=""),
    )


def downgrade() -> None:
    op.drop_table("quota_reads")
    op.drop_table("quotas")
