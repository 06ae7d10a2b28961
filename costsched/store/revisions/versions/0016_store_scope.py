"""Each store names its own launches: a store id, made once, prefixes the launch attempt
tag of every move created from now on (`MoveRecord.attempt`), so that two stores using the
same cloud account (or the same local instances folder), which both count jobs and moves
from 1, never take each other's instance for their own (adopted, ended, swept).

Adds `store_identity` (one row: the store's id, random, made when this revision runs: a
store that existed before gets one too) and `moves.scope` (the id of the store that created
the move), empty for every move stored before: a move under way keeps the attempt tag its
launch was sent with.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    identity = op.create_table(
        "store_identity",
        sa.Column("id", sa.Integer, primary_key=True),  # always 1: one row
        sa.Column("scope", sa.String(16), nullable=False),
    )
    op.bulk_insert(identity, [{"id": 1, "scope": secrets.token_hex(5)}])
    with op.batch_alter_table("moves") as table:
        table.add_column(sa.Column("scope", sa.String(16), nullable=False,
                                   server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("moves") as table:
        table.drop_column("scope")
    op.drop_table("store_identity")
