"""Billed line items in the store: what the clouds' billing exports say was charged, beside
the placements they were matched to.

A line's identity is (cloud, line_key). Storing an export's lines replaces the lines of the
same source (within the window read, when one is given) and any stored line of the same
identity, in one transaction: importing the same export twice leaves one copy. `drop`
deletes what older deliveries of a cumulative export stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import pandas as pd
from sqlalchemy import Engine, and_, bindparam, delete, func, insert, select, tuple_, update

from costsched.store.database import (
    epoch_second,
    from_epoch_seconds,
    to_epoch_seconds,
    write,
)
from costsched.store.schema import bill_lines

# The columns of a stored line, as `lines` returns them.
STORED_COLUMNS = ["id", "cloud", "account", "source", "line_key", "usage_start", "usage_end",
                  "resource_id", "category", "line_type", "service", "usage_type", "region",
                  "usage_amount", "usage_unit", "usd", "currency", "job_tag", "attempt_tag",
                  "placement_id", "job_id", "matched_by", "imported_at"]
_KEY_CHUNK = 400  # (cloud, line_key) pairs per IN list
_INSERT_CHUNK = 5_000


def stored_source(source: str) -> str:
    """A source as the store keeps it: cut to its column, as `replace` cuts it."""
    return source[:bill_lines.c.source.type.length or len(source)]


class BillStore:
    """The billed line items read from the clouds' exports."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def replace(self, source: str, lines: pd.DataFrame, *, at: datetime,
                window: tuple[datetime, datetime] | None = None) -> int:
        """Store `lines` (costsched.bills.lines.LINE_COLUMNS, from `source`) in one
        transaction, in place of the stored lines of `source` (those whose usage starts in
        `window` when one is given) and of any stored line with the same (cloud, line_key).
        The number stored."""
        rows = lines.copy()
        rows["usage_start_ts"] = to_epoch_seconds(rows.pop("usage_start")) if len(rows) \
            else pd.Series(dtype="int64")
        rows["usage_end_ts"] = to_epoch_seconds(rows.pop("usage_end")) if len(rows) \
            else pd.Series(dtype="int64")
        rows = rows.drop_duplicates(["cloud", "line_key"], keep="last")
        for column in rows.columns:  # a long ARN or SKU is cut to its column, not refused
            length = getattr(bill_lines.c[column].type, "length", None) \
                if column in bill_lines.c else None
            if length and rows[column].dtype != float:
                rows[column] = rows[column].astype(str).str.slice(0, length)
        rows["imported_ts"] = epoch_second(at, "at")
        names = list(rows.columns)  # plain values per column: faster than to_dict's rows
        records = [dict(zip(names, values, strict=True)) for values in zip(
            *(rows[c].astype(object).tolist() for c in names), strict=True)]
        same_source = bill_lines.c.source == source
        if window is not None:
            lo, hi = (epoch_second(t, "window") for t in window)
            same_source = and_(same_source, bill_lines.c.usage_start_ts >= lo,
                               bill_lines.c.usage_start_ts < hi)
        keys = list(zip(rows["cloud"], rows["line_key"], strict=True))

        def work(conn) -> int:  # noqa: ANN001 - a Connection
            conn.execute(delete(bill_lines).where(same_source))
            pair = tuple_(bill_lines.c.cloud, bill_lines.c.line_key)
            for first in range(0, len(keys), _KEY_CHUNK):
                conn.execute(delete(bill_lines).where(pair.in_(keys[first:first + _KEY_CHUNK])))
            for first in range(0, len(records), _INSERT_CHUNK):
                conn.execute(insert(bill_lines), records[first:first + _INSERT_CHUNK])
            return len(records)

        return write(self.engine, work)

    def sources(self, under: str) -> dict[str, int]:
        """The stored sources whose name starts with `under`, with their number of lines."""
        query = (select(bill_lines.c.source, func.count())
                 .where(bill_lines.c.source.startswith(under, autoescape=True))
                 .group_by(bill_lines.c.source))
        with self.engine.connect() as conn:
            found = conn.execute(query).all()
        # LIKE ignores case on SQLite: keep the exact prefix only.
        return {str(s): int(n) for s, n in found if str(s).startswith(under)}

    def drop(self, sources: Iterable[str]) -> int:
        """Delete the stored lines of `sources` in one transaction; the number deleted."""
        names = sorted(set(sources))
        if not names:
            return 0

        def work(conn) -> int:  # noqa: ANN001 - a Connection
            gone = 0
            for first in range(0, len(names), _KEY_CHUNK):
                gone += conn.execute(delete(bill_lines).where(
                    bill_lines.c.source.in_(names[first:first + _KEY_CHUNK]))).rowcount
            return gone

        return write(self.engine, work)

    def lines(self, *, since: datetime | None = None, until: datetime | None = None,
              cloud: str | None = None, ids: Iterable[int] | None = None,
              ending_after: datetime | None = None) -> pd.DataFrame:
        """The stored lines whose usage starts in [since, until) (and ends after
        `ending_after`), oldest first."""
        query = select(bill_lines).order_by(bill_lines.c.usage_start_ts, bill_lines.c.id)
        if ending_after is not None:
            query = query.where(bill_lines.c.usage_end_ts > epoch_second(ending_after,
                                                                         "ending_after"))
        if since is not None:
            query = query.where(bill_lines.c.usage_start_ts >= epoch_second(since, "since"))
        if until is not None:
            query = query.where(bill_lines.c.usage_start_ts < epoch_second(until, "until"))
        if cloud is not None:
            query = query.where(bill_lines.c.cloud == cloud)
        if ids is not None:
            query = query.where(bill_lines.c.id.in_([int(i) for i in ids]))
        with self.engine.connect() as conn:
            result = conn.execute(query)
            frame = pd.DataFrame([tuple(r) for r in result], columns=list(result.keys()))
        frame["usage_start"] = from_epoch_seconds(frame.pop("usage_start_ts"))
        frame["usage_end"] = from_epoch_seconds(frame.pop("usage_end_ts"))
        frame["imported_at"] = from_epoch_seconds(frame.pop("imported_ts"))
        for column in ("placement_id", "job_id"):
            frame[column] = frame[column].astype("Int64")
        frame[["usage_amount", "usd"]] = frame[["usage_amount", "usd"]].astype(float)
        return frame[STORED_COLUMNS]

    def set_matches(self, matches: pd.DataFrame) -> int:
        """Record each line's match (columns id, placement_id, job_id, matched_by; a NaN
        placement: unmatched) in one transaction. The number of lines updated."""
        records = [{"line": int(i),
                    "placement": None if pd.isna(p) else int(p),
                    "job": None if pd.isna(j) else int(j),
                    "by": str(b or "")}
                   for i, p, j, b in zip(matches["id"], matches["placement_id"],
                                         matches["job_id"], matches["matched_by"], strict=True)]
        if not records:
            return 0
        statement = (update(bill_lines).where(bill_lines.c.id == bindparam("line"))
                     .values(placement_id=bindparam("placement"), job_id=bindparam("job"),
                             matched_by=bindparam("by")))

        def work(conn) -> int:  # noqa: ANN001 - a Connection
            conn.execute(statement, records)
            return len(records)

        return write(self.engine, work)

    def count(self, *, unmatched: bool = False) -> int:
        query = select(func.count()).select_from(bill_lines)
        if unmatched:
            query = query.where(bill_lines.c.placement_id.is_(None))
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())
