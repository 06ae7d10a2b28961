"""The job-move state machine's persisted state (one row per launch, migration or
recovery), what launching taught about offerings' availability, and the scheduled
optimizer's leases and task runs; the job log's state columns widened to hold moves' states.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "moves",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("state", sa.String(24), nullable=False),
        sa.Column("source_instance", sa.String(256), nullable=False, server_default=""),
        sa.Column("candidates", sa.Text, nullable=False),
        sa.Column("tried", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("target_instance", sa.String(256), nullable=False, server_default=""),
        sa.Column("checkpoint_version", sa.Integer, nullable=True),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
        sa.Column("created_ts", sa.BigInteger, nullable=False),
        sa.Column("updated_ts", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_moves_job", "moves", ["job_id", "id"])
    op.create_table(
        "availability",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cloud", sa.String(16), nullable=False),
        sa.Column("region", sa.String(64), nullable=False),
        sa.Column("zone", sa.String(64), nullable=False),
        sa.Column("instance_type", sa.String(128), nullable=False),
        sa.Column("market", sa.String(16), nullable=False),
        sa.Column("gpu_model", sa.String(32), nullable=False),
        sa.Column("gpu_count", sa.Integer, nullable=False),
        sa.Column("ts", sa.BigInteger, nullable=False),
        sa.Column("event", sa.String(16), nullable=False),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
    )
    op.create_index("ix_availability_ts", "availability", ["ts"])
    # The job log records moves' states too ("checkpoint_verified"): wider than a job's.
    with op.batch_alter_table("job_events") as batch:
        batch.alter_column("from_state", type_=sa.String(24), existing_nullable=True)
        batch.alter_column("to_state", type_=sa.String(24), existing_nullable=True)
    op.create_table(
        "leases",
        sa.Column("name", sa.String(128), primary_key=True),
        sa.Column("holder", sa.String(128), nullable=False),
        sa.Column("expires_ts", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "task_runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("task", sa.String(32), nullable=False),
        sa.Column("holder", sa.String(128), nullable=False),
        sa.Column("started_ts", sa.BigInteger, nullable=False),
        sa.Column("finished_ts", sa.BigInteger, nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("detail", sa.Text, nullable=False, server_default=""),
    )
    op.create_index("ix_task_runs_task", "task_runs", ["task", "id"])


def downgrade() -> None:
    op.drop_index("ix_task_runs_task", table_name="task_runs")
    op.drop_table("task_runs")
    op.drop_table("leases")
    with op.batch_alter_table("job_events") as batch:
        batch.alter_column("from_state", type_=sa.String(16), existing_nullable=True)
        batch.alter_column("to_state", type_=sa.String(16), existing_nullable=True)
    op.drop_index("ix_availability_ts", table_name="availability")
    op.drop_table("availability")
    op.drop_index("ix_moves_job", table_name="moves")
    op.drop_table("moves")
