"""The clouds' billed line items, read from their billing exports and matched to placements.

Adds a table only.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

TABLE = "bill_lines"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cloud", sa.String(16), nullable=False),
        sa.Column("account", sa.String(128), nullable=False, server_default=""),
        sa.Column("source", sa.String(1024), nullable=False),
        sa.Column("line_key", sa.String(128), nullable=False),
        sa.Column("usage_start_ts", sa.BigInteger, nullable=False),
        sa.Column("usage_end_ts", sa.BigInteger, nullable=False),
        sa.Column("resource_id", sa.String(512), nullable=False, server_default=""),
        sa.Column("category", sa.String(16), nullable=False),
        sa.Column("line_type", sa.String(64), nullable=False, server_default=""),
        sa.Column("service", sa.String(128), nullable=False, server_default=""),
        sa.Column("usage_type", sa.String(256), nullable=False, server_default=""),
        sa.Column("region", sa.String(64), nullable=False, server_default=""),
        sa.Column("usage_amount", sa.Float, nullable=False, server_default=sa.text("0")),
        sa.Column("usage_unit", sa.String(32), nullable=False, server_default=""),
        sa.Column("usd", sa.Float, nullable=False),
        sa.Column("currency", sa.String(8), nullable=False, server_default=""),
        sa.Column("job_tag", sa.String(32), nullable=False, server_default=""),
        sa.Column("attempt_tag", sa.String(64), nullable=False, server_default=""),
        sa.Column("placement_id", sa.Integer, nullable=True),
        sa.Column("job_id", sa.Integer, nullable=True),
        sa.Column("matched_by", sa.String(16), nullable=False, server_default=""),
        sa.Column("imported_ts", sa.BigInteger, nullable=False),
        sa.UniqueConstraint("cloud", "line_key", name="uq_bill_lines_key"),
    )
    op.create_index("ix_bill_lines_usage", TABLE, ["usage_start_ts"])
    op.create_index("ix_bill_lines_source", TABLE, ["source"])


def downgrade() -> None:
    op.drop_index("ix_bill_lines_source", table_name=TABLE)
    op.drop_index("ix_bill_lines_usage", table_name=TABLE)
    op.drop_table(TABLE)
