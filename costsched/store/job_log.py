"""A job's log (an event per thing that happened to it) and what its plan predicted at
its launch, kept to be checked against what it did."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timezone

from sqlalchemy import Connection, Engine, func, insert, select, update

from costsched.lazy import pandas as pd
from costsched.store.database import epoch_second, from_epoch_seconds, write
from costsched.store.job_rows import (
    EVENT_COLUMNS,
    PREDICTION_COLUMNS,
    EventRow,
    _check_text,
    _event,
    _number,
    _state,
    _touch,
    id_chunks,
    read_rows,
)
from costsched.store.schema import job_events, job_predictions, moves


class JobLog:
    """The log and predictions half of the job store (`JobStore`), in the database of
    `engine`."""

    engine: Engine

    def note(self, job_id: int, kind: str, detail: str, *, at: datetime) -> None:
        """Append an event of `kind` to the job's log (e.g. a budget alarm)."""
        _check_text("kind", kind, 32, required=True)
        ts = epoch_second(at)

        def log(conn: Connection) -> None:
            _touch(conn, job_id, ts)
            _event(conn, job_id, ts, kind, None, None, detail)

        write(self.engine, log)

    def correct(self, job_id: int, words_of: tuple[str, int], was: str, now: str, kind: str,
                said: str, *, at: datetime) -> bool:
        """Where the words of one of the job's records (`words_of`: ("event", id), an event
        of its log; ("move", id), one of its moves) still are `was`: make them `now`, and
        note `said` of `kind` in its log, in one transaction. Whether it did: words another
        writer corrected first are left, and noted once."""
        _check_text("kind", kind, 32, required=True)
        table = {"event": job_events, "move": moves}[words_of[0]]
        ts = epoch_second(at)

        def amend(conn: Connection) -> bool:
            changed = conn.execute(update(table).where(
                table.c.id == int(words_of[1]), table.c.job_id == int(job_id),
                table.c.detail == was).values(detail=now)).rowcount
            if changed != 1:
                return False
            _touch(conn, job_id, ts)
            _event(conn, job_id, ts, kind, None, None, said)
            return True

        return write(self.engine, amend)

    def events(self, job_id: int) -> pd.DataFrame:
        """The job's log, in the order it was written."""
        with self.engine.connect() as conn:
            _state(conn, job_id)
        return self.events_of([job_id])

    def events_of(self, job_ids: Iterable[int] | None, kinds: Iterable[str] = ()
                  ) -> pd.DataFrame:
        """The logs of `job_ids` (every job's when None), only events of `kinds` when
        given, in the order they were written, in one read."""
        rows = self.event_rows(job_ids, kinds)
        frame = pd.DataFrame([(*r[:2], int(r.at.timestamp()), *r[3:]) for r in rows],
                             columns=EVENT_COLUMNS)
        frame["at"] = from_epoch_seconds(frame["at"])
        return frame

    def event_rows(self, job_ids: Iterable[int] | None, kinds: Iterable[str] = ()
                   ) -> list[EventRow]:
        """`events_of` as rows, for a caller that needs no frame (and no pandas)."""
        query = select(job_events).order_by(job_events.c.id)
        kinds = tuple(kinds)
        if kinds:
            query = query.where(job_events.c.kind.in_(kinds))
        rows = read_rows(self.engine, query, job_events, job_ids)
        rows.sort(key=lambda r: r.id)  # one order across the chunks
        return [EventRow(r.id, r.job_id, datetime.fromtimestamp(r.ts, timezone.utc), r.kind,
                         r.from_state, r.to_state, r.detail) for r in rows]

    def last_details(self, job_ids: Iterable[int], kind: str) -> dict[int, str]:
        """{job id: the detail of its newest event of `kind`}, for those of `job_ids`
        that have one, in one read."""
        newest = select(func.max(job_events.c.id)).where(job_events.c.kind == kind)
        out: dict[int, str] = {}
        with self.engine.connect() as conn:
            for chunk in id_chunks(job_ids, job_events.c.job_id):
                ids = newest.where(chunk).group_by(job_events.c.job_id)
                query = select(job_events.c.job_id, job_events.c.detail).where(
                    job_events.c.id.in_(ids.scalar_subquery()))
                out.update({int(j): d for j, d in conn.execute(query)})
        return out

    # --- what each job's plan predicted at launch ------------------------------------

    def predict(self, job_id: int, prediction: Mapping[str, object], *, at: datetime) -> bool:
        """Keep what the job's plan predicted at its launch (PREDICTION_COLUMNS but
        job_id, predicted_at and flagged_at); the first prediction of a job is kept, a
        later one is not stored (False)."""
        row = {c: prediction[c] for c in PREDICTION_COLUMNS[2:-1]}
        for c in ("usd_per_hour", "steps", "steps_per_second", "expected_hours",
                  "expected_usd", "expected_preemptions"):
            row[c] = _number(c, row[c])
        row["gpu_count"] = int(row["gpu_count"])  # type: ignore[call-overload]
        row["throughput_source"] = str(row["throughput_source"])[:2000]
        row.update(job_id=int(job_id), predicted_ts=epoch_second(at))

        def keep(conn: Connection) -> bool:
            _state(conn, job_id)
            found = conn.execute(select(job_predictions.c.job_id).where(
                job_predictions.c.job_id == int(job_id))).first()
            if found is not None:
                return False
            conn.execute(insert(job_predictions).values(row))
            return True

        return write(self.engine, keep)

    def predictions(self, job_ids: Iterable[int] | None = None) -> pd.DataFrame:
        """The predictions of `job_ids` (every job's when None), by job id, in one read."""
        query = select(job_predictions).order_by(job_predictions.c.job_id)
        with self.engine.connect() as conn:
            rows = [tuple(r) for chunk in id_chunks(job_ids, job_predictions.c.job_id)
                    for r in conn.execute(query.where(chunk))]
        frame = pd.DataFrame(rows, columns=list(job_predictions.c.keys()))
        if frame.empty:
            return pd.DataFrame({c: pd.Series(dtype="datetime64[ns, UTC]" if c.endswith(
                "_at") else float if c.startswith(("expected", "steps", "usd")) else object)
                for c in PREDICTION_COLUMNS})
        frame["predicted_at"] = from_epoch_seconds(frame.pop("predicted_ts"))
        flagged = frame.pop("flagged_ts")
        frame["flagged_at"] = pd.to_datetime(flagged.astype("Float64"), unit="s", utc=True)
        return frame[PREDICTION_COLUMNS]

    def predicted(self, job_ids: Iterable[int]) -> set[int]:
        """Those of `job_ids` with a prediction kept, in one read (no frame)."""
        query = select(job_predictions.c.job_id)
        with self.engine.connect() as conn:
            return {int(r[0]) for chunk in id_chunks(job_ids, job_predictions.c.job_id)
                    for r in conn.execute(query.where(chunk))}

    def flag_predictions(self, job_ids: Iterable[int], *, at: datetime) -> set[int]:
        """Mark the predictions of `job_ids` as contradicted by their runs, once, in one
        transaction: the ids marked now (not those marked before or without one)."""
        ts = epoch_second(at)
        wanted = sorted({int(j) for j in job_ids})
        if not wanted:
            return set()

        def flag(conn: Connection) -> set[int]:
            found: set[int] = set()
            for chunk in id_chunks(wanted, job_predictions.c.job_id):
                found |= {int(r[0]) for r in conn.execute(
                    select(job_predictions.c.job_id).where(
                        chunk, job_predictions.c.flagged_ts.is_(None)))}
            for chunk in id_chunks(found, job_predictions.c.job_id):
                conn.execute(update(job_predictions).where(chunk).values(flagged_ts=ts))
            return found

        return write(self.engine, flag)

    def note_many(self, details: Mapping[int, str], kind: str, *, at: datetime) -> None:
        """`note` of many jobs ({job id: detail}) in one transaction; the jobs' records are
        not touched (their last write stays when their step was read)."""
        _check_text("kind", kind, 32, required=True)
        rows = [{"job_id": int(j), "ts": epoch_second(at), "kind": kind, "from_state": None,
                 "to_state": None, "detail": str(d)} for j, d in details.items()]
        if rows:
            write(self.engine, lambda conn: conn.execute(insert(job_events), rows))


