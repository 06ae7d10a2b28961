"""Placeholder for revision 0005 (written on another branch); it changes nothing.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
