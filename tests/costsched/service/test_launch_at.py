"""A launch given the time it happens at (`at`: a replay, a test at a fixed time) stamps
every step of it with that time, its first placement included, never the wall clock's:
later steps at later given times then sort after it whatever the clock says."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_start_secrets import _spec


def test_a_launch_at_a_given_time_places_the_job_at_that_time(
        store: PriceStore, tmp_path: Path) -> None:
    at = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=3)
    set_prices(store, {"us-east-1a": 1.0}, at - timedelta(hours=1))
    [job] = service.launch(store, _spec(tmp_path, "fixed", []), launcher=FakeLauncher(),
                           at=at, checkpoint_root=str(tmp_path / "ckpt"))
    [start] = store.jobs.placements(job.id)["start_at"].tolist()
    assert start.to_pydatetime() == at
    assert [m.created_at for m in store.moves.of_job(job.id)] == [at]
