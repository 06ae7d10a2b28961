"""A job's placements on offerings: opened and ended with the job's log, read in sets."""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from datetime import datetime, timezone

from sqlalchemy import Connection, Engine, insert, select, update

from costsched.amounts import stored_price
from costsched.lazy import pandas as pd
from costsched.model import (
    BOOKED_MARKETS,
    FINAL_STATES,
    PLACEMENT_REASONS,
    InvalidInput,
    Offering,
)
from costsched.store.database import epoch_second, write
from costsched.store.job_rows import (
    PLACEMENT_COLUMNS,
    PlacementRow,
    _check_text,
    _close,
    _event,
    _number,
    _touch,
    _utc,
    placement_frame,
    read_rows,
)
from costsched.store.schema import placements
from costsched.vocabulary import offering_label


class JobPlacements:
    """The placements half of the job store (`JobStore`), in the database of `engine`."""

    engine: Engine

    def place(
        self,
        job_id: int,
        offering_key: tuple[str, str, str, str, str, str],
        *,
        gpu_model: str,
        gpu_count: int,
        at: datetime,
        usd_per_hour: float,
        reason: str,
        instance: str = "",
        keep_open: bool = False,
        waiting: bool = False,
    ) -> int:
        """End the job's open placement at `at` and open one on `offering_key`; its id.

        `offering_key` is (cloud, region, zone, instance_type, market, os), as
        `Offering.key`; `usd_per_hour` is the stored price at `at`. `keep_open` leaves the
        open placement running beside the new one (a migration's source is billed until
        it is terminated: `end_placement(..., instance=...)` closes it then). `waiting`:
        its instance waits for capacity and is billed from when it runs (a market of
        BILLED_FROM_RUNNING): charged nothing until `runs` says when.
        """
        price = place_checked(offering_key, gpu_model, gpu_count, usd_per_hour, reason,
                              instance)
        ts = epoch_second(at)
        return write(self.engine, lambda conn: self._place(
            conn, job_id, offering_key, ts, gpu_model=gpu_model, gpu_count=int(gpu_count),
            price=price, reason=reason, instance=instance, keep_open=keep_open,
            waiting=bool(waiting)))

    def runs(self, job_id: int, instance: str, at: datetime) -> int | None:
        """The job's open placement on `instance` that waits for its instance to run: its
        instance runs since `at`, from when it is charged (its start is set to `at`); its
        id, or None when none waits (idempotent)."""
        ts = epoch_second(at)

        def started(conn: Connection) -> int | None:
            found = conn.execute(select(placements.c.id, placements.c.start_ts).where(
                placements.c.job_id == int(job_id), placements.c.instance == instance,
                placements.c.end_ts.is_(None), placements.c.waiting)).first()
            if found is None:
                raise _NothingOpen  # undone: not even updated_ts moves
            _touch(conn, job_id, ts)
            conn.execute(update(placements).where(placements.c.id == found.id).values(
                start_ts=max(ts, int(found.start_ts)), waiting=False))
            _event(conn, job_id, ts, "placement", None, None, runs_detail(found.id, ts))
            return int(found.id)

        try:
            return write(self.engine, started)
        except _NothingOpen:
            return None

    @staticmethod
    def _place(conn: Connection, job_id: int, offering_key: tuple[str, ...], ts: int, *,
               gpu_model: str, gpu_count: int, price: float, reason: str, instance: str,
               keep_open: bool, waiting: bool = False) -> int:
        state = _touch(conn, job_id, ts)
        if state in FINAL_STATES:
            raise InvalidInput(
                f"job {job_id} is {state!r}: expected a job that has not ended"
            )
        closed = None if keep_open else _close(conn, job_id, ts)
        row = dict(zip(PLACEMENT_COLUMNS[2:8], offering_key, strict=True))
        row.update(job_id=int(job_id), gpu_model=gpu_model, gpu_count=int(gpu_count),
                   start_ts=ts, end_ts=None, usd_per_hour=price, reason=reason,
                   instance=instance, waiting=waiting)
        placement_id = int(conn.execute(insert(placements).values(row))
                           .inserted_primary_key[0])
        _event(conn, job_id, ts, "placement", None, None,
               placed_detail(placement_id, reason, offering_key, price, closed))
        return placement_id

    def end_placement(self, job_id: int, at: datetime, *, instance: str | None = None
                      ) -> int | None:
        """End the job's open placement (the one on `instance`, if given) at `at`; its id,
        or None when none was open."""
        ts = epoch_second(at)

        def end(conn: Connection) -> int | None:
            _touch(conn, job_id, ts)
            closed = _close(conn, job_id, ts, instance)
            if closed is None:
                raise _NothingOpen  # undone: not even updated_ts moves
            _event(conn, job_id, ts, "placement_end", None, None, f"placement {closed} ended")
            return closed

        try:
            return write(self.engine, end)
        except _NothingOpen:
            return None

    def placements(self, job_id: int | None = None) -> pd.DataFrame:
        """Placements (of one job, or all), by job and start; end_at is NaT while open."""
        return self.placements_of(None if job_id is None else [job_id])

    def placements_of(self, job_ids: Iterable[int] | None, *,
                      open_only: bool = False) -> pd.DataFrame:
        """`placement_rows` as a frame (PLACEMENT_COLUMNS); end_at is NaT while open."""
        return placement_frame(self.placement_rows(job_ids, open_only=open_only))

    def placement_rows(self, job_ids: Iterable[int] | None, *,
                       open_only: bool = False) -> list[PlacementRow]:
        """The placements of `job_ids` (every job's when None; only those still open with
        `open_only`), by job and start, in one read."""
        query = select(*(placements.c[c] for c in _STORED)).order_by(
            placements.c.job_id, placements.c.start_ts, placements.c.id)
        if open_only:
            query = query.where(placements.c.end_ts.is_(None))
        rows = read_rows(self.engine, query, placements, job_ids)
        if job_ids is not None:  # read in chunks: one order across them
            rows.sort(key=lambda r: (r.job_id, r.start_ts, r.id))
        return [PlacementRow(*r[:10], _utc(r.start_ts),
                             None if r.end_ts is None else _utc(r.end_ts), float(r[12]),
                             r[13], r[14], bool(r[15])) for r in rows]

    def newest_open_placement(self, job_id: int) -> int | None:
        """The id of the job's newest open placement (a move has two open for a while, the
        newest being where it goes), or None: `placements_of`'s rule, in one small read."""
        query = (select(placements.c.id)
                 .where(placements.c.job_id == int(job_id), placements.c.end_ts.is_(None))
                 .order_by(placements.c.start_ts.desc(), placements.c.id.desc()).limit(1))
        with self.engine.connect() as conn:
            found = conn.execute(query).scalar()
        return None if found is None else int(found)


# The stored columns, in PLACEMENT_COLUMNS' order (times as epoch seconds).
_STORED = [{"start_at": "start_ts", "end_at": "end_ts"}.get(c, c) for c in PLACEMENT_COLUMNS]


class _NothingOpen(Exception):  # noqa: N818 - undoes a write that found nothing to end
    """`end_placement` found no open placement: its transaction is rolled back."""


def place_checked(offering_key: tuple, gpu_model: str, gpu_count: int, usd_per_hour: float,
                  reason: str, instance: str) -> float:
    """Check what `place` is given (InvalidInput naming what is wrong); the price."""
    if not isinstance(offering_key, tuple) or len(offering_key) != 6:
        raise InvalidInput(
            f"offering key {offering_key!r}: expected (cloud, region, zone,"
            " instance_type, market, os)"
        )
    cloud, region, zone, instance_type, market, os_name = offering_key
    _check_text("gpu_model", gpu_model, 32, required=gpu_count != 0)  # "" for a CPU type
    if isinstance(gpu_count, bool) or not isinstance(gpu_count, numbers.Integral):
        raise InvalidInput(f"gpu_count {gpu_count!r}: expected a whole number >= 0")
    Offering(cloud, region, zone, instance_type, market, gpu_model, int(gpu_count),
             os=os_name)  # validates the vocabulary
    if reason not in PLACEMENT_REASONS:
        raise InvalidInput(
            f"reason {reason!r}: expected one of {', '.join(PLACEMENT_REASONS)}"
        )
    # Booked capacity is paid for at its purchase: its hours cost nothing more.
    price = _number("usd_per_hour", usd_per_hour, positive=market not in BOOKED_MARKETS)
    _check_text("instance", instance, 256)
    return price


def runs_detail(placement_id: object, ts: int) -> str:
    """The log's line for a waiting placement whose instance runs (charged from then)."""
    when = datetime.fromtimestamp(ts, timezone.utc).isoformat().replace("+00:00", "Z")
    return f"placement {placement_id}: its instance runs: charged from {when}"


def placed_detail(placement_id: object, reason: str, offering_key: tuple, price: float,
                  closed: object | None) -> str:
    """The log's line for a placement opened (`closed`: the one it ended, if any), its
    offering and price written as every line writes a stored price (`amounts.stored_price`:
    'aws us-east-1a p3.2xlarge on-demand at $3.0600/h', '... at $30.13118/h')."""
    ended = f" (ended placement {closed})" if closed is not None else ""
    return (f"placement {placement_id}: {reason} on {offering_label(*offering_key[:5])} at "
            f"{stored_price(price)}/h{ended}")
