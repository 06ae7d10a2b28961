"""The job store's set-based readers return, for many jobs in one read, what its per-job
readers return job by job; ids past one IN list are read in chunks."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched.migration.machine import candidate, offering_of
from costsched.store import PriceStore, job_rows

T0 = datetime(2026, 1, 2, tzinfo=timezone.utc)
KEY = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PriceStore:
    monkeypatch.setattr(job_rows, "ID_CHUNK", 2)  # seven jobs: four IN lists
    store = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    for n in range(7):
        job_id = store.jobs.create(f"j{n}", {"spec": {"name": f"j{n}"}}, 100, at=T0)
        if n == 6:
            continue  # one job never placed
        store.jobs.transition(job_id, "running", at=T0)
        store.jobs.place(job_id, KEY, gpu_model="V100", gpu_count=1, at=T0,
                         usd_per_hour=0.9, reason="launch", instance=f"i{n}")
        for k in range(n % 3):
            store.jobs.note(job_id, "checkpoint", f"note {k}", at=T0 + timedelta(minutes=k))
        if n % 2:
            store.jobs.place(job_id, KEY, gpu_model="V100", gpu_count=1,
                             at=T0 + timedelta(hours=1), usd_per_hour=0.8,
                             reason="migration", instance=f"i{n}b", keep_open=True)
        if n == 4:
            there = offering_of({"key": list(KEY), "gpu_model": "V100", "gpu_count": 1})
            store.moves.create(job_id, "migration", [candidate(there, 0.8)],
                               at=T0 + timedelta(hours=2), source_instance=f"i{n}")
    return store


def test_set_readers_equal_the_per_job_readers(store: PriceStore) -> None:
    ids = [r.id for r in store.jobs.records()]
    assert len(ids) == 7
    wanted = ids[1:6]
    assert store.jobs.records(wanted) == [store.jobs.get(i) for i in wanted]
    assert [r.id for r in store.jobs.records(states=["pending"])] == [ids[6]]
    together = store.jobs.placements_of(wanted)
    pd.testing.assert_frame_equal(
        together, pd.concat([store.jobs.placements(i) for i in wanted], ignore_index=True))
    pd.testing.assert_frame_equal(store.jobs.placements_of(None), store.jobs.placements())
    still = store.jobs.placements_of(wanted, open_only=True)
    assert still["end_at"].isna().all() and len(still) == (~together["end_at"].notna()).sum()
    logs = store.jobs.events_of(wanted)
    pd.testing.assert_frame_equal(logs, pd.concat([store.jobs.events(i) for i in wanted])
                                  .sort_values("id").reset_index(drop=True))
    assert set(store.jobs.events_of(wanted, kinds=["checkpoint"])["kind"]) == {"checkpoint"}
    newest = store.jobs.last_details(ids, "checkpoint")
    assert newest == {i: "note 1" if (i - 1) % 3 == 2 else "note 0"
                      for i in ids[:6] if (i - 1) % 3}
    moves = store.moves.of_jobs(ids)
    assert moves == {i: store.moves.of_job(i) for i in ids}
    assert [m.job_id for m in moves[ids[4]]] == [ids[4]]


def test_steps_of_many_jobs_are_stored_at_once(store: PriceStore) -> None:
    ids = [r.id for r in store.jobs.records()]
    at = T0 + timedelta(hours=3)
    store.jobs.record_steps({ids[0]: 10, ids[3]: 42.5}, at=at)
    assert [store.jobs.get(i).steps_done for i in ids[:4]] == [10.0, 0.0, 0.0, 42.5]
    assert store.jobs.get(ids[3]).updated_at == at
    with pytest.raises(job_rows.InvalidInput, match="steps_done"):
        store.jobs.record_steps({ids[0]: -1}, at=at)
    assert store.jobs.get(ids[0]).steps_done == 10.0  # nothing stored
