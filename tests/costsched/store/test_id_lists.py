"""Reads of many jobs by id select the same rows on SQLite (IN lists) and PostgreSQL (one
array: `= ANY`), however many chunks the ids take."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
import pytest
from sqlalchemy import event

from costsched.store import PriceStore, job_rows

T0 = datetime(2026, 1, 2, tzinfo=timezone.utc)
KEY = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")


def test_reads_by_id_select_the_same_rows_on_both_backends(
        any_store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job_rows, "ID_CHUNK", 3)  # eight jobs: three chunks
    store = any_store
    ids = []
    for n in range(8):
        job_id = store.jobs.create(f"j{n}", {"spec": {"name": f"j{n}"}}, 100, at=T0)
        ids.append(job_id)
        store.jobs.transition(job_id, "running", at=T0)
        store.jobs.place(job_id, KEY, gpu_model="V100", gpu_count=1, at=T0,
                         usd_per_hour=0.9, reason="launch", instance=f"i{n}")
        store.jobs.note(job_id, "checkpoint", f"note {n}", at=T0)
    wanted = ids[::2] + [10_000]  # and an id no job has
    sent: list[str] = []
    listen = lambda *args: sent.append(args[2])  # noqa: E731 - the statement
    event.listen(store.jobs.engine, "before_cursor_execute", listen)
    try:
        records = store.jobs.records(wanted)
        placed = store.jobs.placements_of(wanted)
        logged = store.jobs.events_of(wanted, kinds=["checkpoint"])
        newest = store.jobs.last_details(wanted, "checkpoint")
        moves = store.moves.of_jobs(wanted)
    finally:
        event.remove(store.jobs.engine, "before_cursor_execute", listen)
    assert [r.id for r in records] == ids[::2]
    every = store.jobs.placements_of(None)
    pd.testing.assert_frame_equal(
        placed, every[every["job_id"].isin(wanted)].reset_index(drop=True))
    assert list(logged["detail"]) == [f"note {n}" for n in range(0, 8, 2)]
    assert newest == {j: f"note {n}" for n, j in enumerate(ids) if n % 2 == 0}
    assert moves == {j: [] for j in wanted}
    by_list = [s for s in sent if "job_id IN" in s or "jobs.id IN" in s]
    by_array = [s for s in sent if "job_id = ANY" in s or "jobs.id = ANY" in s]
    if store.url.startswith("postgresql"):
        assert by_array and not by_list
    else:
        assert by_list and not by_array
