"""A job the user stopped is `stopped` (it was `cancelled`), and starting it again is a move
of its own kind, `start` (it was a `recovery`): a user's stop and start is no recovery.

Existing rows are renamed: jobs `cancelled` -> `stopped` (and the state changes in their
events); a `recovery` move that started a stopped job again (its job was moved from
`cancelled` to `pending` by the user just before) -> `start`, and the placements it
launched -> reason `start`. The index of one live job per name is made again over the new
state. A move's own `cancelled` state keeps its name (a stop cancels a move).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

STARTED = "started again from its newest verified checkpoint"  # the start move's detail


def _live(stopped: str) -> sa.TextClause:
    return sa.text(f"state NOT IN ('succeeded', 'failed', '{stopped}')")


def _rename(old: str, new: str, old_kind: str, new_kind: str) -> None:
    conn = op.get_bind()
    jobs = sa.table("jobs", sa.column("state"))
    events = sa.table("job_events", sa.column("kind"), sa.column("from_state"),
                      sa.column("to_state"))
    moves = sa.table("moves", sa.column("id"), sa.column("job_id"), sa.column("kind"),
                     sa.column("detail"), sa.column("created_ts"), sa.column("updated_ts"))
    placements = sa.table("placements", sa.column("job_id"), sa.column("reason"),
                          sa.column("start_ts"))
    conn.execute(sa.update(jobs).where(jobs.c.state == old).values(state=new))
    for column in ("from_state", "to_state"):
        conn.execute(sa.update(events).where(events.c.kind == "state",
                                             events.c[column] == old)
                     .values({column: new}))
    started = conn.execute(sa.select(moves.c.id, moves.c.job_id, moves.c.created_ts,
                                     moves.c.updated_ts)
                           .where(moves.c.kind == old_kind, moves.c.detail == STARTED)).all()
    for _, job_id, created, updated in started:
        # The placements a start launched: its job's, opened while it ran (one open move
        # a job at a time, so no other move's).
        conn.execute(sa.update(placements).where(
            placements.c.job_id == job_id, placements.c.reason == old_kind,
            placements.c.start_ts.between(created, updated)).values(reason=new_kind))
    if started:
        conn.execute(sa.update(moves).where(moves.c.id.in_([m[0] for m in started]))
                     .values(kind=new_kind))
    op.drop_index("uq_jobs_live_name", table_name="jobs")
    op.create_index("uq_jobs_live_name", "jobs", ["name"], unique=True,
                    sqlite_where=_live(new), postgresql_where=_live(new))


def upgrade() -> None:
    _rename("cancelled", "stopped", "recovery", "start")


def downgrade() -> None:
    _rename("stopped", "cancelled", "start", "recovery")
