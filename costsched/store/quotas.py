"""The accounts' quotas in the store: the newest reading of each quota GPU instances draw
on (its limit and use, with its time: a quota is a fact with an age, like a price), the
last launch each one refused, and how each cloud's quotas were last read.

A reading replaces the quota's row and keeps its last refusal; a refusal is written at
once (outside any batch of job steps: it is a fact of the account, not of one job), and
counts until a newer reading.
"""

from __future__ import annotations

import threading
from datetime import datetime

from sqlalchemy import Connection, Engine, and_, insert, select, update

from costsched.lazy import pandas as pd
from costsched.model import CLOUDS, InvalidInput
from costsched.store.database import epoch_second, rows_frame, write
from costsched.store.schema import quota_reads, quotas

# A reading's rows (`record`), and `current`'s (with the times and the last refusal).
READING_COLUMNS = ["scope", "code", "name", "unit", "limit", "used", "source"]
COLUMNS = ["cloud", "scope", "code", "name", "unit", "account", "limit", "used",
           "observed_at", "source", "refused", "refused_at", "refused_detail"]
READ_COLUMNS = ["cloud", "read_at", "quotas", "error", "fix"]
_KEY = ("cloud", "scope", "code")
# The stored columns `current` reads, and the names they have in its frame.
_STORED = ("cloud", "scope", "code", "name", "unit", "account", "limit_value", "used_value",
           "observed_ts", "source", "refused_value", "refused_ts", "refused_detail")
_SHOWN = {"limit_value": "limit", "used_value": "used", "refused_value": "refused"}
# Refusals this process recorded: what it keeps of the quotas for a pass is read again
# once one is (`refusals_recorded`), so the next job of the pass knows.
_recorded = 0
_recording = threading.Lock()


def refusals_recorded() -> int:
    """How many refusals this process has recorded (a new number after each)."""
    return _recorded


class QuotaStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record(self, cloud: str, reading: pd.DataFrame, *, at: datetime, account: str = "",
               error: str = "", fix: str = "") -> int:
        """Store one cloud's reading (READING_COLUMNS, as of `at`) and how it went
        (`error`: why it could not be read, in one line; `fix`: what to do). Each quota
        read replaces its row, its last refusal kept; quotas not read keep theirs (with
        their age). The number stored."""
        _check_cloud(cloud)
        rows = _reading_rows(reading)
        ts = epoch_second(at, "at")

        def work(conn: Connection) -> int:
            for r in rows:
                values = {"name": r["name"], "unit": r["unit"], "account": account,
                          "limit_value": r["limit"], "used_value": r["used"],
                          "observed_ts": ts, "source": r["source"]}
                _upsert(conn, (cloud, r["scope"], r["code"]), values)
            done = {"read_ts": ts, "quotas": len(rows), "error": error[:2000],
                    "fix": fix[:2000]}
            if conn.execute(update(quota_reads).where(quota_reads.c.cloud == cloud)
                            .values(**done)).rowcount == 0:
                conn.execute(insert(quota_reads).values(cloud=cloud, **done))
            return len(rows)

        return write(self.engine, work)

    def refused(self, cloud: str, scope: str, code: str, *, unit: str, asked: float | None,
                at: datetime, detail: str, name: str = "") -> None:
        """A launch that asked for `asked` units of the quota (None: unknown) was refused
        at `at` because of it (`detail`: the cloud's words): until a newer reading, no
        request as large fits."""
        _check_cloud(cloud)
        ts = epoch_second(at, "at")

        def work(conn: Connection) -> None:
            values = {"refused_value": asked, "refused_ts": ts, "refused_detail": detail[:2000]}
            if name:
                values["name"] = name
            _upsert(conn, (cloud, scope, code), values, unit=unit)

        write(self.engine, work)
        global _recorded
        with _recording:
            _recorded += 1

    def current(self) -> pd.DataFrame:
        """Every quota as last read or refused (COLUMNS; the times UTC, NaT where none)."""
        query = select(*(quotas.c[c].label(_SHOWN.get(c, c)) for c in _STORED)
                       ).order_by(*(quotas.c[k] for k in _KEY))
        with self.engine.connect() as conn:
            return rows_frame(conn.execute(query), COLUMNS, times={
                "observed_ts": "observed_at", "refused_ts": "refused_at"}, types=dict.fromkeys(
                ("limit", "used", "refused"), "float64"))

    def reads(self) -> pd.DataFrame:
        """How each cloud's quotas were last read (READ_COLUMNS; error '' when they were)."""
        with self.engine.connect() as conn:
            return rows_frame(conn.execute(select(quota_reads).order_by(quota_reads.c.cloud)),
                              READ_COLUMNS, times={"read_ts": "read_at"})


def _upsert(conn: Connection, key: tuple[str, str, str], values: dict, *,
            unit: str | None = None) -> None:
    where = and_(*(quotas.c[k] == v for k, v in zip(_KEY, key, strict=True)))
    if conn.execute(update(quotas).where(where).values(**values)).rowcount == 0:
        unit = values.get("unit", unit)
        conn.execute(insert(quotas).values(**dict(zip(_KEY, key, strict=True)), unit=unit,
                                           **{k: v for k, v in values.items() if k != "unit"}))


def _check_cloud(cloud: str) -> None:
    if cloud not in CLOUDS:
        raise InvalidInput(f"quota cloud {cloud!r}: expected one of {', '.join(CLOUDS)}")


def _reading_rows(reading: pd.DataFrame) -> list[dict]:
    missing = [c for c in READING_COLUMNS if c not in reading.columns]
    if missing:
        raise InvalidInput(f"quota reading lacks columns: {', '.join(missing)}")
    out = []
    for r in reading[READING_COLUMNS].to_dict("records"):
        if not str(r["code"]).strip() or not str(r["scope"]).strip():
            raise InvalidInput("quota reading: expected a code and a scope in every row")
        for column in ("limit", "used"):
            value = r[column]
            r[column] = None if value is None or pd.isna(value) else float(value)
        out.append(r)
    return out
