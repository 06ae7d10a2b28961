"""The decider's latest decision on each job (`job_decisions`): what the pass that decides
a running job (the daemon's re-plan, `costsched migrate`) found, kept so that `status`
shows it, with its time and who decided, instead of deciding again."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import NamedTuple

from sqlalchemy import Connection, Engine, select

from costsched.store.database import dialect_insert, epoch_second, write
from costsched.store.job_rows import id_chunks
from costsched.store.schema import job_decisions

DECISION_CHUNK = 90  # rows per statement: 10 parameters each, under SQLite's 999


class StoredDecision(NamedTuple):
    """A job's latest decision: on placement `placement_id`, at `decided_at`, by
    `decided_by` ("supervisor", "daemon", "costsched migrate"); whether it moves, to
    `choice` (an offering's label; '' when it stays), the expected dollars of the rest of
    the job staying and moving (None where not a number), the move it started, and why."""

    job_id: int
    placement_id: int
    decided_at: datetime
    decided_by: str
    moves: bool
    choice: str
    stay_usd: float | None
    move_usd: float | None
    move_id: int | None
    reason: str


class DecisionStore:
    """The jobs' latest decisions in the database of `engine`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record(self, decisions: Sequence[StoredDecision]) -> None:
        """Keep each of `decisions` as its job's latest (replacing the one before), in one
        transaction."""
        if not decisions:
            return
        rows = [{"job_id": int(d.job_id), "placement_id": int(d.placement_id),
                 "decided_ts": epoch_second(d.decided_at), "decided_by": d.decided_by,
                 "moves": bool(d.moves), "choice": d.choice, "stay_usd": _number(d.stay_usd),
                 "move_usd": _number(d.move_usd), "move_id": d.move_id,
                 "reason": d.reason} for d in decisions]
        latest = list({r["job_id"]: r for r in rows}.values())

        def store(conn: Connection) -> None:
            # One statement per chunk that replaces a job's row where one is kept: two
            # passes deciding the same job at once (two `migrate`s, a daemon's and a
            # user's) each keep theirs, the later last, neither failing on the other's.
            upsert = dialect_insert(conn.dialect.name)
            for start in range(0, len(latest), DECISION_CHUNK):
                chunk = upsert(job_decisions).values(latest[start:start + DECISION_CHUNK])
                conn.execute(chunk.on_conflict_do_update(
                    index_elements=[job_decisions.c.job_id],
                    set_={k: chunk.excluded[k] for k in latest[0] if k != "job_id"}))

        write(self.engine, store)

    def latest(self, job_ids: Iterable[int]) -> dict[int, StoredDecision]:
        """The latest decision of each of `job_ids` that has one, by job id, in one read."""
        wanted = sorted({int(j) for j in job_ids})
        if not wanted:
            return {}
        c = job_decisions.c
        query = select(c.job_id, c.placement_id, c.decided_ts, c.decided_by, c.moves,
                       c.choice, c.stay_usd, c.move_usd, c.move_id, c.reason)
        out = {}
        with self.engine.connect() as conn:
            for chunk in id_chunks(wanted, c.job_id):
                for r in conn.execute(query.where(chunk)):
                    out[int(r.job_id)] = StoredDecision(
                        int(r.job_id), int(r.placement_id),
                        datetime.fromtimestamp(int(r.decided_ts), timezone.utc), str(r.decided_by),
                        bool(r.moves), str(r.choice), r.stay_usd, r.move_usd,
                        None if r.move_id is None else int(r.move_id), str(r.reason))
        return out


def _number(value: float | None) -> float | None:
    """A dollar figure as stored: None where it is not a finite number."""
    return None if value is None or not math.isfinite(value) else float(value)
