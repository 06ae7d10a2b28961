"""The writes of many job moves' steps, written together: a few statements a batch.

A pass that steps thousands of moves would otherwise write each step's few rows in
transactions of their own. A `Batch` reads the rows its moves' steps may change at once
(their jobs, moves and open placements), answers the steps' reads and checks from them as
the store would (a move's compare-and-set, a job's expected state, a placement's times),
keeps the writes, and at `commit` writes them set-based in one transaction: one INSERT of
the placements opened, one UPDATE of the placements ended, of the jobs and of the moves
changed (each still compare-and-set), one INSERT of the availability observations and of
the jobs' events, in the order the steps wrote them.

No lock is held while the steps run (they call launchers, which may take long): at the
commit, a job whose state or move changed since the batch read them (a stop recorded
meanwhile) has its step's writes left out, as if that step had stopped before writing;
it is taken again from the store as it is then (`machine.run_many`), and so a stop wins.
What a batch keeps until its commit is what may be lost with it (the process killed):
the writes of a step that follow what its launcher did. The step is then taken again, its
launch adopted by its attempt tag; the attempt a launch is tagged with was committed
before. A batch is committed every `BATCH_SECONDS` or `BATCH_STEPS` steps (`full`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from sqlalchemy import Connection, Engine, select

from costsched.model import FINAL_STATES, InvalidInput, Offering
from costsched.store.availability import check_observation
from costsched.store.bulk import insert_rows, insert_with_ids, update_rows
from costsched.store.database import (
    epoch_second,
    from_epoch_second,
    write,
)
from costsched.store.job_log import JobLog
from costsched.store.job_placements import place_checked, placed_detail, runs_detail
from costsched.store.job_rows import (
    PLACEMENT_COLUMNS,
    StaleState,
    _check_states,
    _check_text,
    id_chunks,
)
from costsched.store.moves import MOVE_STATES, MoveRecord, MoveStore, _record
from costsched.store.quotas import QuotaStore
from costsched.store.schema import availability, job_events, jobs, moves, placements

BATCH_SECONDS = 1.0  # a batch open this long is committed after its current step
BATCH_STEPS = 2000  # steps per batch at most


@dataclass
class _Open:
    """A placement open as the batch sees it (`id` None: opened in the batch, until its
    commit)."""

    id: int | None
    job_id: int
    start_ts: int
    instance: str
    order: int  # opened in the batch: after every stored one, in the order opened
    waiting: bool = False  # its instance waits for capacity: charged from when it runs


class Batch:
    """The steps of `moves_` (their jobs', moves' and open placements' rows read now) and
    the stores they write to (`jobs`, `moves`, `availability`), written at `commit`
    (`quotas`: at once)."""

    def __init__(self, engine: Engine, moves_: Sequence[MoveRecord],
                 stale: Iterable[int] = ()) -> None:
        """`moves_` as their last writes left them (those of `stale` ids are read again:
        their last step was left out of its batch)."""
        self.engine = engine
        self.opened, self.steps = time.monotonic(), 0
        self.move_rows = {m.id: m for m in moves_}
        with engine.connect() as conn:  # no lock is held while the steps call launchers
            self._read(conn, [m.job_id for m in moves_], sorted(set(stale)))
        self.state_as_read = dict(self.states)
        self.move_as_read = {i: (m.state, m.tried) for i, m in self.move_rows.items()}
        self.touched: dict[int, int] = {}  # job id: its updated_ts
        self.placed: list[tuple[_Open, dict]] = []
        self.ended: list[tuple[_Open, int]] = []
        self.running: list[_Open] = []  # stored waiting placements whose instance runs
        self.seen: list[tuple[int, dict]] = []  # (job id, an availability observation)
        self.advanced: set[int] = set()  # the moves written
        self.events: list[tuple[dict, object]] = []  # (row, its detail or a function of it)
        self.jobs, self.moves, self.availability = _Jobs(self), _Moves(self), _Seen(self)
        # A quota's refusal is a fact of the account, not of a step: written at once.
        self.quotas = QuotaStore(engine)
        self.job: int | None = None  # whose step runs now (`_Seen` tags its rows)

    def _read(self, conn: Connection, job_ids: list[int], move_ids: list[int]) -> None:
        self.states: dict[int, str] = {}
        self.open: dict[int, list[_Open]] = {int(j): [] for j in job_ids}
        for chunk in id_chunks(job_ids, jobs.c.id):
            self.states.update((int(i), s) for i, s in conn.execute(
                select(jobs.c.id, jobs.c.state).where(chunk)))
        for chunk in id_chunks(move_ids, moves.c.id):
            self.move_rows.update((int(r["id"]), _record(r)) for r in conn.execute(
                select(moves).where(chunk)).mappings())
        for chunk in id_chunks(job_ids, placements.c.job_id):
            for r in conn.execute(
                    select(placements.c.id, placements.c.job_id, placements.c.start_ts,
                           placements.c.instance, placements.c.waiting)
                    .where(chunk, placements.c.end_ts.is_(None))
                    .order_by(placements.c.start_ts, placements.c.id)):
                self.open[int(r.job_id)].append(_Open(int(r.id), int(r.job_id),
                                                      int(r.start_ts), str(r.instance), 0,
                                                      bool(r.waiting)))

    def full(self) -> bool:
        """Whether to commit now (one more step counted)."""
        self.steps += 1
        return self.steps >= BATCH_STEPS or time.monotonic() - self.opened >= BATCH_SECONDS

    # --- the writes, at the commit ---------------------------------------------------------

    def commit(self) -> set[int]:
        """Write what the steps wrote, in one transaction: the ids of the jobs whose writes
        were left out, because their job's state or their move changed since the batch
        read them (a stop recorded while a step called its launcher): as if that step had
        stopped before writing, to be taken again from the store as it is then."""
        def commit(conn: Connection) -> set[int]:
            dropped = self._changed_since(conn)
            self._write(conn, dropped)
            return dropped

        return write(self.engine, commit)

    def _changed_since(self, conn: Connection) -> set[int]:
        """The jobs (of those written) whose state, or whose move, is not as read; their
        rows locked (PostgreSQL; SQLite's write lock is held) until the commit."""
        written = set(self.touched) | {self.move_rows[i].job_id for i in self.advanced} | \
            {row["job_id"] for _, row in self.placed} | {o.job_id for o, _ in self.ended} | \
            {o.job_id for o in self.running}
        changed = set()
        for chunk in id_chunks(written, jobs.c.id):
            changed |= {int(i) for i, state in conn.execute(
                select(jobs.c.id, jobs.c.state).where(chunk).with_for_update())
                if state != self.state_as_read.get(int(i))}
        for chunk in id_chunks(self.advanced, moves.c.id):
            changed |= {int(j) for i, j, state, tried in conn.execute(
                select(moves.c.id, moves.c.job_id, moves.c.state, moves.c.tried)
                .where(chunk).with_for_update())
                if (state, tried) != self.move_as_read.get(int(i))}
        return changed

    def _write(self, conn: Connection, dropped: set[int]) -> None:
        placed = [(o, row) for o, row in self.placed if row["job_id"] not in dropped]
        made = insert_with_ids(conn, placements, [row for _, row in placed])
        for (opened, _), placement_id in zip(placed, made, strict=True):
            opened.id = placement_id
        running = [o for o in self.running if o.job_id not in dropped]
        update_rows(conn, placements, [{"was_id": o.id, "start_ts": o.start_ts,
                                        "waiting": False} for o in running], ["id"],
                    ["start_ts", "waiting"])
        ended = [(o, ts) for o, ts in self.ended if o.job_id not in dropped]
        update_rows(conn, placements, [{"was_id": o.id, "end_ts": ts}
                                       for o, ts in ended], ["id"], ["end_ts"])
        touched = [{"was_id": j, "was_state": self.state_as_read[j],
                    "state": self.states[j], "updated_ts": ts}
                   for j, ts in self.touched.items() if j not in dropped]
        self._check(update_rows(conn, jobs, touched, ["id", "state"],
                                ["state", "updated_ts"]), touched, "job")
        changed = [{"was_id": m.id, "was_state": self.move_as_read[m.id][0],
                    "was_tried": self.move_as_read[m.id][1], "state": m.state,
                    "tried": m.tried, "target_instance": m.target_instance,
                    "checkpoint_version": m.checkpoint_version,
                    "updated_ts": epoch_second(m.updated_at)}
                   for m in (self.move_rows[i] for i in sorted(self.advanced))
                   if m.job_id not in dropped]
        self._check(update_rows(conn, moves, changed, ["id", "state", "tried"],
                                ["state", "tried", "target_instance", "checkpoint_version",
                                 "updated_ts"]), changed, "move")
        insert_rows(conn, availability, [row for job_id, row in self.seen
                                         if job_id not in dropped])
        insert_rows(conn, job_events, [{**row, "detail": detail() if callable(detail)
                                        else detail}
                                       for row, detail in self.events
                                       if row["job_id"] not in dropped])

    def _check(self, changed: int, rows: list, what: str) -> None:
        if changed != len(rows):  # its rows are locked: only a writer ignoring them
            raise StaleState(f"a {what} changed under a batch of moves' steps: another "
                             "costsched wrote it; the steps are taken again")

    # --- what the steps read and write ---------------------------------------------------

    def state(self, job_id: int) -> str:
        if job_id not in self.states:
            raise InvalidInput(f"job {job_id}: not among the batch's jobs")
        return self.states[job_id]

    def touch(self, job_id: int, ts: int) -> str:
        state = self.state(job_id)
        self.touched[job_id] = ts
        return state

    def event(self, job_id: int, ts: int, kind: str, from_state: str | None,
              to_state: str | None, detail: object) -> None:
        self.events.append(({"job_id": int(job_id), "ts": ts, "kind": kind,
                             "from_state": from_state, "to_state": to_state}, detail))

    def close(self, job_id: int, ts: int, instance: str | None = None) -> _Open | None:
        """`job_rows._close` on the batch's view: the placement ended, or None."""
        found = [o for o in self.open.get(job_id, ())
                 if instance is None or o.instance == instance]
        if not found:
            return None
        first = min(found, key=lambda o: (o.start_ts, o.order, o.id or 0))
        if ts < first.start_ts:
            raise InvalidInput(
                f"time {from_epoch_second(ts)}: expected at or after the start of"
                f" placement {first.id} ({from_epoch_second(first.start_ts)})")
        self.open[job_id].remove(first)
        self.ended.append((first, ts))
        return first


class _Jobs:
    """The job store's reads and writes a move's step makes, on the batch."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch
        self.engine = batch.engine

    def last_details(self, job_ids: Iterable[int], kind: str) -> dict[int, str]:
        """`JobLog.last_details` from the store (the batch's own notes are not yet there)."""
        return JobLog.last_details(self, job_ids, kind)  # type: ignore[arg-type]

    def note(self, job_id: int, kind: str, detail: str, *, at: datetime) -> None:
        """`JobLog.note`, written at the commit (the job's record is not touched)."""
        _check_text("kind", kind, 32, required=True)
        self.batch.event(int(job_id), epoch_second(at), kind, None, None, detail)

    def state(self, job_id: int) -> str:
        return self.batch.state(int(job_id))

    def transition(self, job_id: int, to_state: str, *, at: datetime,
                   expect: str | Iterable[str] | None = None, detail: str = "") -> None:
        _check_states("state", [to_state])
        expected = None if expect is None else _check_states("expected state", expect)
        _check_text("detail", detail, None)
        ts, job_id = epoch_second(at), int(job_id)
        current = self.batch.state(job_id)
        if expected is not None and current not in expected:
            raise StaleState(f"job {job_id} is {current!r}: expected "
                             f"{' or '.join(expected)} to move it to {to_state!r}")
        self.batch.states[job_id] = to_state
        self.batch.touched[job_id] = ts
        self.batch.event(job_id, ts, "state", current, to_state, detail)

    def end_placement(self, job_id: int, at: datetime, *, instance: str | None = None
                      ) -> int | None:
        """The placement ended (-1 for one opened in the batch: its id comes at the
        commit), or None."""
        ts, job_id = epoch_second(at), int(job_id)
        self.batch.state(job_id)
        closed = self.batch.close(job_id, ts, instance)
        if closed is None:
            return None
        self.batch.touch(job_id, ts)
        self.batch.event(job_id, ts, "placement_end", None, None,
                         lambda: f"placement {closed.id} ended")
        return closed.id if closed.id is not None else -1

    def runs(self, job_id: int, instance: str, at: datetime) -> int | None:
        """`JobPlacements.runs` on the batch's view (-1 for a placement opened in the
        batch: its id comes at the commit)."""
        ts, job_id = epoch_second(at), int(job_id)
        self.batch.state(job_id)
        found = next((o for o in self.batch.open.get(job_id, ())
                      if o.instance == instance and o.waiting), None)
        if found is None:
            return None
        found.start_ts, found.waiting = max(ts, found.start_ts), False
        row = next((r for o, r in self.batch.placed if o is found), None)
        if row is not None:  # opened in this batch: inserted as it is now
            row.update(start_ts=found.start_ts, waiting=False)
        else:
            self.batch.running.append(found)
        self.batch.touch(job_id, ts)
        self.batch.event(job_id, ts, "placement", None, None,
                         lambda: runs_detail(found.id, ts))
        return found.id if found.id is not None else -1

    def place(self, job_id: int, offering_key: tuple[str, str, str, str, str, str], *,
              gpu_model: str, gpu_count: int, at: datetime, usd_per_hour: float,
              reason: str, instance: str = "", keep_open: bool = False,
              waiting: bool = False) -> int:
        """The placement opened (-1: its id comes at the commit)."""
        price = place_checked(offering_key, gpu_model, gpu_count, usd_per_hour, reason,
                              instance)
        ts, job_id = epoch_second(at), int(job_id)
        state = self.batch.state(job_id)
        if state in FINAL_STATES:
            raise InvalidInput(f"job {job_id} is {state!r}: expected a job that has not ended")
        closed = None if keep_open else self.batch.close(job_id, ts)
        self.batch.touch(job_id, ts)
        row = dict(zip(PLACEMENT_COLUMNS[2:8], offering_key, strict=True))
        row.update(job_id=job_id, gpu_model=gpu_model, gpu_count=int(gpu_count),
                   start_ts=ts, end_ts=None, usd_per_hour=price, reason=reason,
                   instance=instance, waiting=bool(waiting))
        opened = _Open(None, job_id, ts, instance, len(self.batch.placed) + 1, bool(waiting))
        self.batch.open.setdefault(job_id, []).append(opened)
        self.batch.placed.append((opened, row))
        self.batch.event(job_id, ts, "placement", None, None, lambda: placed_detail(
            opened.id, reason, offering_key, price, None if closed is None else closed.id))
        return -1


class _Moves:
    """The move store's reads and writes a move's step makes, on the batch."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch

    @property
    def scope(self) -> str:
        return MoveStore(self.batch.engine).scope

    def of_job(self, job_id: int) -> list[MoveRecord]:
        """The job's moves as stored, those of the batch as its steps left them."""
        return [self.batch.move_rows.get(m.id, m)
                for m in MoveStore(self.batch.engine).of_job(job_id)]

    def get(self, move_id: int) -> MoveRecord:
        found = self.batch.move_rows.get(int(move_id))
        if found is None:
            raise InvalidInput(f"move {move_id}: not among the batch's moves")
        return found

    def advance(self, move: MoveRecord, to_state: str, *, at: datetime, detail: str = "",
                **values: object) -> MoveRecord:
        if to_state not in MOVE_STATES:
            raise InvalidInput(f"move state {to_state!r}: expected one of "
                               f"{', '.join(MOVE_STATES)}")
        ts = epoch_second(at)
        stored = self.get(move.id)
        if (stored.state, stored.tried) != (move.state, move.tried):
            raise StaleState(f"move {move.id} is no longer {move.state!r}: another "
                             "costsched moved it first")
        after = replace(stored, state=to_state,  # type: ignore[arg-type]
                        updated_at=datetime.fromtimestamp(ts, timezone.utc), **values)
        self.batch.move_rows[move.id] = after
        self.batch.advanced.add(move.id)
        self.batch.event(move.job_id, ts, "move", move.state, to_state,
                         f"move {move.id} ({move.kind}): {detail}".rstrip(": "))
        return after


class _Seen:
    """The availability store's `record`, on the batch."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch

    def record(self, offering: Offering, event: str, *, at: datetime, detail: str = "",
               source: str = "") -> None:
        check_observation(event, source)
        self.batch.seen.append((self.batch.job if self.batch.job is not None else -1, {
            "cloud": offering.cloud, "region": offering.region, "zone": offering.zone,
            "instance_type": offering.instance_type, "market": offering.market,
            "gpu_model": offering.gpu_model, "gpu_count": offering.gpu_count,
            "ts": epoch_second(at), "event": event, "detail": detail[:2000],
            "source": source}))
