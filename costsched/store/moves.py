"""The persisted state of job moves (launch, migration, recovery, start): one row per move,
changed only by compare-and-set, each change logged in the job's event log in the same
transaction. The state machine that drives them is `costsched.migration`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import Connection, Engine, insert, select, update
from sqlalchemy.exc import IntegrityError

from costsched.model import FINAL_STATES, InvalidInput
from costsched.store.bulk import insert_rows, insert_with_ids
from costsched.store.database import epoch_second, write
from costsched.store.jobs import StaleState, id_chunks
from costsched.store.schema import job_events, jobs, moves, placements
from costsched.store.scope import attempt_tag, store_scope

MOVE_KINDS = ("launch", "migration", "recovery", "start")
MOVE_STATES = ("planned", "checkpointing", "checkpoint_verified", "target_launched",
               "target_running", "source_terminated", "done", "failed", "cancelled")
ENDED = ("done", "failed", "cancelled")


@dataclass(frozen=True)
class NewMove:
    """A move to create (`MoveStore.create_many`): `create`'s arguments."""

    job_id: int
    kind: str
    candidates: list[dict]
    source_instance: str = ""
    detail: str = ""


@dataclass(frozen=True)
class MoveRecord:
    id: int
    job_id: int
    kind: str
    state: str
    source_instance: str
    candidates: list[dict]  # offerings to try in order: key, gpu_model, gpu_count, price
    tried: int  # how many candidates failed
    target_instance: str
    checkpoint_version: int | None
    detail: str
    created_at: datetime
    updated_at: datetime
    scope: str = ""  # the id of the store that created it ('' when stored before scopes)

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    @property
    def candidate(self) -> dict | None:
        """The offering being tried now; None when every candidate failed."""
        return self.candidates[self.tried] if self.tried < len(self.candidates) else None

    @property
    def attempt(self) -> str:
        """The launch attempt's tag: unique per store, move and candidate (a move stored
        before scopes keeps the tag its launch was sent with: `costsched.store.scope`)."""
        return attempt_tag(self.scope, self.job_id, self.id, self.tried)


class MoveStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @property
    def scope(self) -> str:
        """This store's id: what its moves' attempt tags carry (`costsched.store.scope`)."""
        return store_scope(self.engine)

    def create(self, job_id: int, kind: str, candidates: list[dict], *, at: datetime,
               source_instance: str = "", detail: str = "") -> MoveRecord:
        if kind not in MOVE_KINDS:
            raise InvalidInput(f"move kind {kind!r}: expected one of {', '.join(MOVE_KINDS)}")
        ts, scope = epoch_second(at), self.scope
        try:
            return write(self.engine, lambda conn: self._create(
                conn, job_id, kind, candidates, ts, source_instance, detail, scope))
        except IntegrityError:  # another writer started a move of this job meanwhile
            raise StaleState(f"job {job_id}: another move of it is under way") from None

    @staticmethod
    def _create(conn: Connection, job_id: int, kind: str, candidates: list[dict], ts: int,
                source_instance: str, detail: str, scope: str) -> MoveRecord:
        # Checked again inside the write: the job is live, has no unfinished move, and a
        # migration's source is still where the job is placed (not moved by another
        # costsched since it decided).
        state = conn.execute(select(jobs.c.state).where(jobs.c.id == int(job_id))
                             .with_for_update()).scalar()
        if state is None:
            raise InvalidInput(f"job {job_id}: no such job in the store")
        if state in FINAL_STATES:
            raise StaleState(f"job {job_id} is {state}: no move starts")
        busy = conn.execute(select(moves.c.id).where(
            moves.c.job_id == int(job_id), moves.c.state.not_in(ENDED))).scalar()
        if busy is not None:
            raise StaleState(f"job {job_id}: move {busy} of it is under way")
        if kind == "migration":
            placed = conn.execute(select(placements.c.id).where(
                placements.c.job_id == int(job_id), placements.c.end_ts.is_(None),
                placements.c.instance == source_instance)).scalar()
            if placed is None:
                raise StaleState(f"job {job_id}: no longer placed on {source_instance}")
        move_id = int(conn.execute(insert(moves).values(
            job_id=int(job_id), kind=kind, state="planned",
            source_instance=source_instance, candidates=json.dumps(candidates),
            tried=0, detail=detail, created_ts=ts, updated_ts=ts, scope=scope,
        )).inserted_primary_key[0])
        conn.execute(insert(job_events).values(
            job_id=int(job_id), ts=ts, kind="move", from_state=None, to_state="planned",
            detail=f"move {move_id} ({kind}) planned: {detail}".rstrip(": ")))
        return _record(conn.execute(select(moves).where(moves.c.id == move_id))
                       .mappings().one())

    def create_many(self, wanted: Sequence[NewMove], *, at: datetime
                    ) -> list[MoveRecord | InvalidInput]:
        """`create` of many moves (one a job) in one transaction, each checked as `create`
        checks it: for each, in order, its record, or the error `create` would have raised
        (StaleState: the job ended, has a move under way, or is no longer on the source)."""
        for new in wanted:
            if new.kind not in MOVE_KINDS:
                raise InvalidInput(f"move kind {new.kind!r}: expected one of "
                                   f"{', '.join(MOVE_KINDS)}")
        if len({new.job_id for new in wanted}) != len(wanted):
            raise InvalidInput("moves: expected one new move a job")
        ts, scope = epoch_second(at), self.scope
        try:
            return write(self.engine, lambda conn: self._create_many(conn, wanted, ts, scope))
        except IntegrityError:  # a move of one of them was started meanwhile: one by one
            out: list[MoveRecord | InvalidInput] = []
            for new in wanted:
                try:
                    out.append(self.create(new.job_id, new.kind, new.candidates, at=at,
                                           source_instance=new.source_instance,
                                           detail=new.detail))
                except InvalidInput as exc:
                    out.append(exc)
            return out

    @staticmethod
    def _create_many(conn: Connection, wanted: Sequence[NewMove], ts: int, scope: str
                     ) -> list[MoveRecord | InvalidInput]:
        ids = [new.job_id for new in wanted]
        states: dict[int, str] = {}
        busy: dict[int, int] = {}
        placed: set[tuple[int, str]] = set()
        for chunk in id_chunks(ids, jobs.c.id):  # the jobs' rows locked, as `_create`'s
            states.update((int(i), s) for i, s in conn.execute(
                select(jobs.c.id, jobs.c.state).where(chunk).with_for_update()))
        for chunk in id_chunks(ids, moves.c.job_id):
            busy.update((int(j), int(m)) for j, m in conn.execute(
                select(moves.c.job_id, moves.c.id).where(chunk, moves.c.state.not_in(ENDED))))
        for chunk in id_chunks(ids, placements.c.job_id):
            placed.update((int(j), str(i)) for j, i in conn.execute(
                select(placements.c.job_id, placements.c.instance).where(
                    chunk, placements.c.end_ts.is_(None))))
        out: list[MoveRecord | InvalidInput | None] = []
        rows = []
        for new in wanted:
            job_id, state = int(new.job_id), states.get(int(new.job_id))
            if state is None:
                out.append(InvalidInput(f"job {job_id}: no such job in the store"))
            elif state in FINAL_STATES:
                out.append(StaleState(f"job {job_id} is {state}: no move starts"))
            elif job_id in busy:
                out.append(StaleState(f"job {job_id}: move {busy[job_id]} of it is under way"))
            elif new.kind == "migration" and (job_id, new.source_instance) not in placed:
                out.append(StaleState(f"job {job_id}: no longer placed on "
                                      f"{new.source_instance}"))
            else:
                out.append(None)
                rows.append({"job_id": job_id, "kind": new.kind, "state": "planned",
                             "source_instance": new.source_instance,
                             "candidates": json.dumps(new.candidates), "tried": 0,
                             "detail": new.detail, "created_ts": ts, "updated_ts": ts,
                             "scope": scope})
        if not rows:
            return out  # type: ignore[return-value]
        made = insert_with_ids(conn, moves, rows)
        insert_rows(conn, job_events, [
            {"job_id": row["job_id"], "ts": ts, "kind": "move", "from_state": None,
             "to_state": "planned",
             "detail": f"move {move_id} ({row['kind']}) planned: {row['detail']}".rstrip(": ")}
            for move_id, row in zip(made, rows, strict=True)])
        records = {}
        for chunk in id_chunks(made, moves.c.id):
            records.update((int(r["id"]), _record(r)) for r in
                           conn.execute(select(moves).where(chunk)).mappings())
        found = iter(made)
        return [records[int(next(found))] if o is None else o for o in out]

    def get(self, move_id: int) -> MoveRecord:
        with self.engine.connect() as conn:
            row = conn.execute(select(moves).where(moves.c.id == int(move_id))).mappings().first()
        if row is None:
            raise InvalidInput(f"move {move_id}: no such move in the store")
        return _record(row)

    def of_job(self, job_id: int) -> list[MoveRecord]:
        """The job's moves, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(moves).where(moves.c.job_id == int(job_id))
                                .order_by(moves.c.id)).mappings().all()
        return [_record(r) for r in rows]

    def of_jobs(self, job_ids: Iterable[int]) -> dict[int, list[MoveRecord]]:
        """{job id: its moves, oldest first} for each of `job_ids` (no moves: []), in one
        read."""
        out: dict[int, list[MoveRecord]] = {int(j): [] for j in job_ids}
        with self.engine.connect() as conn:
            for chunk in id_chunks(out, moves.c.job_id):
                for row in conn.execute(select(moves).where(chunk)
                                        .order_by(moves.c.id)).mappings():
                    out[int(row["job_id"])].append(_record(row))
        return out

    def by_ids(self, move_ids: Iterable[int]) -> dict[int, MoveRecord]:
        """{move id: its record} of those of `move_ids` the store has, in one read."""
        out: dict[int, MoveRecord] = {}
        with self.engine.connect() as conn:
            for chunk in id_chunks({int(i) for i in move_ids}, moves.c.id):
                out.update((int(r["id"]), _record(r))
                           for r in conn.execute(select(moves).where(chunk)).mappings())
        return out

    def changed_since(self, at: datetime) -> list[MoveRecord]:
        """The moves changed at or after `at` (unfinished ones included), oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(moves).where(moves.c.updated_ts >= epoch_second(at))
                                .order_by(moves.c.id)).mappings().all()
        return [_record(r) for r in rows]

    def unfinished(self) -> list[MoveRecord]:
        """Every move not ended yet, oldest first: what a restarted costsched resumes."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(moves).where(moves.c.state.not_in(ENDED))
                                .order_by(moves.c.id)).mappings().all()
        return [_record(r) for r in rows]

    def advance(self, move: MoveRecord, to_state: str, *, at: datetime, detail: str = "",
                **values: object) -> MoveRecord:
        """Move `move` from the state it was read in to `to_state` (compare-and-set), with
        `values` (tried, target_instance, checkpoint_version); StaleState if another writer
        moved it first."""
        if to_state not in MOVE_STATES:
            raise InvalidInput(f"move state {to_state!r}: expected one of "
                               f"{', '.join(MOVE_STATES)}")
        ts = epoch_second(at)
        with self.engine.begin() as conn:
            changed = conn.execute(
                update(moves).where(moves.c.id == move.id, moves.c.state == move.state,
                                    moves.c.tried == move.tried)
                .values(state=to_state, updated_ts=ts, **values)).rowcount
            if changed != 1:
                raise StaleState(f"move {move.id} is no longer {move.state!r}: another "
                                 "costsched moved it first")
            conn.execute(insert(job_events).values(
                job_id=move.job_id, ts=ts, kind="move", from_state=move.state,
                to_state=to_state, detail=f"move {move.id} ({move.kind}): {detail}".rstrip(": ")))
            # Read back in the same transaction: the row as this write left it.
            row = conn.execute(select(moves).where(moves.c.id == move.id)).mappings().one()
        return _record(row)


def _record(row) -> MoveRecord:  # noqa: ANN001 - a SQLAlchemy RowMapping
    return MoveRecord(
        id=int(row["id"]), job_id=int(row["job_id"]), kind=row["kind"], state=row["state"],
        source_instance=row["source_instance"], candidates=json.loads(row["candidates"]),
        tried=int(row["tried"]), target_instance=row["target_instance"],
        checkpoint_version=(None if row["checkpoint_version"] is None
                            else int(row["checkpoint_version"])),
        detail=row["detail"], created_at=_utc(row["created_ts"]),
        updated_at=_utc(row["updated_ts"]), scope=str(row["scope"] or ""))


def _utc(epoch_second: int) -> datetime:
    # The standard library's conversion (pandas' costs a fraction of a millisecond a call).
    return datetime.fromtimestamp(int(epoch_second), timezone.utc)
