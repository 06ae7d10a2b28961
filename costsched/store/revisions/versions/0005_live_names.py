"""One live job per name and one unfinished move per job, enforced by the store: two
costsched processes launching the same name, or starting a move of the same job, at the
same time cannot both succeed.

Two partial unique indexes (SQLite and PostgreSQL both have them). A store that already
holds two live jobs of one name keeps both: the newer ones are renamed "<name>#<id>" (and
the rename logged in their events); a job with several unfinished moves keeps its oldest,
the others are cancelled (logged too).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

import time

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

FINAL = ("succeeded", "failed", "cancelled")
ENDED = ("done", "failed", "cancelled")
LIVE_JOB = sa.text("state NOT IN ('succeeded', 'failed', 'cancelled')")
OPEN_MOVE = sa.text("state NOT IN ('done', 'failed', 'cancelled')")


def upgrade() -> None:
    conn = op.get_bind()
    now = int(time.time())
    jobs = sa.table("jobs", sa.column("id"), sa.column("name"), sa.column("state"))
    moves = sa.table("moves", sa.column("id"), sa.column("job_id"), sa.column("state"))
    events = sa.table("job_events", sa.column("job_id"), sa.column("ts"), sa.column("kind"),
                      sa.column("detail"))
    seen: set[str] = set()
    for job_id, name in conn.execute(sa.select(jobs.c.id, jobs.c.name)
                                     .where(jobs.c.state.not_in(FINAL)).order_by(jobs.c.id)):
        if name in seen:
            new = f"{name[:100]}#{job_id}"
            conn.execute(sa.update(jobs).where(jobs.c.id == job_id).values(name=new))
            conn.execute(sa.insert(events).values(
                job_id=job_id, ts=now, kind="renamed",
                detail=f"renamed {new!r}: another live job is called {name!r}"))
        seen.add(name)
    held: set[int] = set()
    for move_id, job_id in conn.execute(sa.select(moves.c.id, moves.c.job_id)
                                        .where(moves.c.state.not_in(ENDED))
                                        .order_by(moves.c.id)):
        if job_id in held:
            conn.execute(sa.update(moves).where(moves.c.id == move_id)
                         .values(state="cancelled"))
            conn.execute(sa.insert(events).values(
                job_id=job_id, ts=now, kind="move",
                detail=f"move {move_id} cancelled: the job has an older unfinished move"))
        held.add(job_id)
    op.create_index("uq_jobs_live_name", "jobs", ["name"], unique=True,
                    sqlite_where=LIVE_JOB, postgresql_where=LIVE_JOB)
    op.create_index("uq_moves_open_per_job", "moves", ["job_id"], unique=True,
                    sqlite_where=OPEN_MOVE, postgresql_where=OPEN_MOVE)


def downgrade() -> None:
    op.drop_index("uq_moves_open_per_job", table_name="moves")
    op.drop_index("uq_jobs_live_name", table_name="jobs")
